"""The words that say a number is a phone number, in the languages the redaction reads."""

from __future__ import annotations

import re

PHONE_WORDS = re.compile(
    r"(?i)(?:phone|tel\b|tel\.|telephone|call|calls|ring|text|sms|mobile|cell|fax|whatsapp|signal|"
    r"telegram|contact|number|reach|dial|handy|telefon\w*|rufnummer|nummer|téléphone|portable|"
    r"numéro|teléfono|telefono|móvil|celular|cellulare|número|numero|telefone|telemóvel|"
    r"telefoon|mobiel|komórk\w*|telefon|телефон\w*|номер|电话|電話|手机|携帯|전화)"
)
