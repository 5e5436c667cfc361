"""The held-out part of the memory-update set, written from classes of update.

Each class is one way a fact meets an older one (`KINDS`), written in seven languages with
everyday values; every sequence gets three unrelated facts of its language around it. These
sequences are never used to tune the rule: `bench.updates --split held_out` scores them apart.

    python -m bench.update_sequences | tail -n +61 >> tests/data/updates.jsonl   # `LATER`
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

KINDS = (
    "change",  # a single value replaced ("Lives in X" → "Now lives in Y")
    "correction",  # a slip put right ("..., not ...")
    "numeric",  # an amount of a budget, goal or number replaced
    "retraction",  # one value of several taken back
    "plan",  # a future change that ends nothing yet
    "coexist",  # one more value beside the old one
    "distractor",  # a relative's fact beside the user's, then the user's update
    "list",  # a third value of a multi-valued subject
)

FILLERS: dict[str, tuple[tuple[str, str], ...]] = {
    "en": (("Enjoys baking bread", "preference"),
           ("Volunteers at an animal shelter", "biographical"),
           ("Is learning to juggle", "goal")),
    "de": (("Backt gern Brot", "preference"), ("Spielt Schach im Verein", "preference"),
           ("Lernt Klavier", "goal")),
    "fr": (("Aime les films de Kurosawa", "preference"),
           ("Fait du yoga le dimanche", "preference"), ("Apprend le japonais", "goal")),
    "es": (("Le gusta el cine negro", "preference"),
           ("Hace escalada los sábados", "preference"),
           ("Aprende a tocar la guitarra", "goal")),
    "pt": (("Gosta de cozinhar peixe", "preference"), ("Faz ioga aos domingos", "preference"),
           ("Aprende alemão", "goal")),
    "it": (("Ama il cinema neorealista", "preference"), ("Fa nuoto il martedì", "preference"),
           ("Impara lo spagnolo", "goal")),
    "ja": (("パンを焼くのが好き", "preference"), ("週末は山登りをする", "preference"),
           ("韓国語を勉強中", "goal")),
}  # fmt: skip


@dataclass(frozen=True)
class Update:
    """One sequence: what was said before, what is said now, and what must be recalled.

    `before` is said long ago, `now` lately; `extra` (a relative's fact, or the other value of
    a list) in between. Which of them are `current` and `stale` follows from the kind."""

    kind: str
    lang: str
    category: str
    before: str
    now: str
    query: str
    extra: str | None = None
    extra_category: str | None = None

    def labels(self) -> tuple[list[str], list[str]]:
        if self.kind == "plan":
            return [self.before], []
        if self.kind == "coexist":
            return [self.before, self.now], []
        if self.kind == "list":
            assert self.extra is not None
            return [self.before, self.extra, self.now], []
        if self.kind == "retraction":
            assert self.extra is not None
            return [self.extra], [self.before]
        return [self.now], [self.before]


B, P, T, C, G = "biographical", "preference", "technical_stack", "constraint", "goal"

UPDATES: tuple[Update, ...] = (
    # English
    Update("change", "en", P, "Commutes to the office by bus", "Cycles to the office these days",
           "How does the user get to the office?"),
    Update("change", "en", P, "Favourite band is Radiohead",
           "Favourite band these days is Arctic Monkeys", "What is the user's favourite band?"),
    Update("change", "en", T, "Uses an iPhone", "Switched to a Pixel phone",
           "Which phone does the user have?"),
    Update("correction", "en", B, "Daughter is 7 years old", "Daughter is 8, not 7",
           "How old is the user's daughter?"),
    Update("numeric", "en", C, "Monthly rent is 1200 dollars",
           "Monthly rent went up to 1350 dollars", "How much rent does the user pay?"),
    Update("numeric", "en", G, "Aims to read 20 books this year",
           "Raised the reading goal to 30 books this year", "How many books does the user "
           "want to read this year?"),
    Update("retraction", "en", P, "Has a gym membership", "Cancelled the gym membership",
           "Which memberships does the user pay for?", "Has a Netflix subscription", P),
    Update("retraction", "en", P, "Plays golf", "Forget that I said I play golf",
           "Which sports does the user play?", "Plays tennis", P),
    Update("plan", "en", B, "Works at Stripe", "Will join Shopify in October",
           "Where does the user work?"),
    Update("coexist", "en", B, "Has a son named Leo", "Also has a daughter named Mia",
           "What are the names of the user's children?"),
    Update("distractor", "en", B, "Lives in Boston", "Moved to Austin",
           "Where does the user live?", "Brother lives in Denver", B),
    Update("distractor", "en", B, "Partner is called Sam", "Partner is now called Alex",
           "What is the name of the user's partner?", "Sister's partner is called Jordan", B),
    Update("list", "en", C, "Avoids gluten", "Avoids refined sugar",
           "Which foods does the user avoid?", "Avoids alcohol", C),
    # German
    Update("change", "de", P, "Fährt einen Golf", "Fährt jetzt einen Tesla",
           "Welches Auto fährt der Nutzer?"),
    Update("change", "de", B, "Arbeitet als Lehrerin", "Arbeitet inzwischen als Schulleiterin",
           "Als was arbeitet die Nutzerin?"),
    Update("numeric", "de", C, "Budget für das Fahrrad liegt bei 800 Euro",
           "Budget für das Fahrrad liegt jetzt bei 1200 Euro",
           "Wie viel darf das Fahrrad kosten?"),
    Update("retraction", "de", P, "Hat ein Abo bei Spotify", "Hat das Spotify-Abo gekündigt",
           "Welche Abos hat der Nutzer?", "Hat ein Abo bei Netflix", P),
    Update("plan", "de", B, "Wohnt in Frankfurt", "Zieht nächsten Monat nach Wien",
           "Wo wohnt der Nutzer?"),
    Update("coexist", "de", B, "Spricht Deutsch", "Spricht auch Niederländisch",
           "Welche Sprachen spricht der Nutzer?"),
    Update("distractor", "de", B, "Arbeitet bei Bosch", "Arbeitet jetzt bei Zeiss",
           "Wo arbeitet der Nutzer?", "Die Schwester arbeitet bei BMW", B),
    Update("correction", "de", B, "Hat am 3. Mai Geburtstag",
           "Hat am 4. Mai Geburtstag, nicht am 3.", "Wann hat der Nutzer Geburtstag?"),
    Update("list", "de", P, "Sammelt Briefmarken", "Sammelt alte Postkarten",
           "Was sammelt der Nutzer?", "Sammelt Münzen", P),
    # French
    Update("change", "fr", P, "Va au bureau en métro", "Va maintenant au bureau à vélo",
           "Comment l'utilisateur va-t-il au bureau ?"),
    Update("change", "fr", P, "Son équipe préférée est le PSG",
           "Son équipe préférée est maintenant l'OM", "Quelle est l'équipe préférée de "
           "l'utilisateur ?"),
    Update("numeric", "fr", C, "Budget vacances de 2000 euros",
           "Budget vacances réduit à 1500 euros", "Quel est le budget vacances ?"),
    Update("retraction", "fr", C, "Est allergique au kiwi", "Finalement pas allergique au kiwi",
           "À quoi l'utilisateur est-il allergique ?", "Est allergique aux noix", C),
    Update("plan", "fr", B, "Travaille chez Danone", "Va rejoindre L'Oréal en septembre",
           "Où travaille l'utilisateur ?"),
    Update("coexist", "fr", P, "Joue du piano", "Joue aussi du violon",
           "De quels instruments joue l'utilisateur ?"),
    Update("distractor", "fr", B, "Habite à Bordeaux", "Habite désormais à Toulouse",
           "Où habite l'utilisateur ?", "Son frère habite à Nice", B),
    Update("correction", "fr", B, "Son bureau porte le numéro 214",
           "Son bureau porte le numéro 241, pas 214", "Quel est le numéro de son bureau ?"),
    # Spanish
    Update("change", "es", T, "Usa un móvil Android", "Ahora usa un iPhone",
           "¿Qué móvil usa el usuario?"),
    Update("change", "es", P, "Su equipo favorito es el Betis",
           "Ahora su equipo favorito es el Sevilla", "¿Cuál es el equipo favorito del usuario?"),
    Update("numeric", "es", C, "Presupuesto para el coche de 15000 euros",
           "Presupuesto para el coche ahora de 12000 euros",
           "¿Cuánto puede gastar el usuario en el coche?"),
    Update("retraction", "es", P, "Está suscrito a HBO", "Canceló la suscripción a HBO",
           "¿A qué servicios está suscrito el usuario?", "Está suscrito a Disney+", P),
    Update("plan", "es", B, "Vive en Bilbao", "Se mudará a Granada el próximo mes",
           "¿Dónde vive el usuario?"),
    Update("coexist", "es", B, "Tiene un perro llamado Toby",
           "Tiene también un gato llamado Luna", "¿Qué mascotas tiene el usuario?"),
    Update("distractor", "es", B, "Trabaja en BBVA", "Ahora trabaja en Santander",
           "¿Dónde trabaja el usuario?", "Su madre trabaja en Zara", B),
    Update("correction", "es", B, "Su número de socio es 4471",
           "Su número de socio es 4417, no 4471", "¿Cuál es el número de socio del usuario?"),
    Update("list", "es", B, "Habla euskera", "Habla italiano",
           "¿Qué idiomas habla el usuario?", "Habla francés", B),
    # Portuguese
    Update("change", "pt", B, "Mora em Curitiba", "Agora mora em Recife",
           "Onde o usuário mora?"),
    Update("change", "pt", T, "Usa o Trello para tarefas",
           "Trocou o Trello pelo Notion para tarefas", "Que ferramenta o usuário usa para "
           "tarefas?"),
    Update("numeric", "pt", G, "Meta de corrida é 5 km por dia",
           "Meta de corrida agora é 8 km por dia", "Qual é a meta de corrida do usuário?"),
    Update("retraction", "pt", P, "Toca bateria", "Já não toca bateria",
           "Que instrumentos o usuário toca?", "Toca violão", P),
    Update("plan", "pt", B, "Trabalha na Natura", "Vai começar no Itaú em março",
           "Onde o usuário trabalha?"),
    Update("coexist", "pt", B, "Fala inglês", "Fala também espanhol",
           "Que línguas o usuário fala?"),
    Update("distractor", "pt", B, "Mora no Porto", "Mudou-se para Braga",
           "Onde o usuário mora?", "A irmã mora em Lisboa", B),
    # Italian
    Update("change", "it", B, "Vive a Torino", "Adesso vive a Bologna",
           "Dove vive l'utente?"),
    Update("change", "it", B, "Lavora presso Fiat", "Ora lavora presso Ferrari",
           "Dove lavora l'utente?"),
    Update("numeric", "it", C, "Il budget per il telefono è 600 euro",
           "Il budget per il telefono ora è 400 euro", "Quanto può spendere per il telefono?"),
    Update("retraction", "it", P, "È abbonato a DAZN", "Ha disdetto l'abbonamento a DAZN",
           "A quali servizi è abbonato l'utente?", "È abbonato a Sky", P),
    Update("plan", "it", B, "Vive a Firenze", "Il prossimo anno si trasferirà a Roma",
           "Dove vive l'utente?"),
    Update("coexist", "it", B, "Parla tedesco", "Parla anche francese",
           "Quali lingue parla l'utente?"),
    Update("distractor", "it", B, "Vive a Bari", "Adesso vive a Lecce", "Dove vive l'utente?",
           "Il fratello vive a Napoli", B),
    # Japanese
    Update("change", "ja", B, "東京に住んでいる", "今は大阪に住んでいる",
           "ユーザーはどこに住んでいますか?"),
    Update("change", "ja", P, "トヨタの車に乗っている", "今はホンダの車に乗っている",
           "ユーザーはどの車に乗っていますか?"),
    Update("numeric", "ja", C, "旅行の予算は10万円", "旅行の予算は今は8万円",
           "ユーザーの旅行の予算はいくらですか?"),
    Update("retraction", "ja", B, "猫を飼っている", "猫のことは忘れて",
           "ユーザーはどんなペットを飼っていますか?", "犬を飼っている", B),
    Update("plan", "ja", B, "ソニーで働いている", "来月から楽天で働く予定",
           "ユーザーはどこで働いていますか?"),
    Update("coexist", "ja", B, "英語を話す", "中国語も話す", "ユーザーは何語を話しますか?"),
    Update("list", "ja", C, "エビにアレルギーがある", "ソバにアレルギーがある",
           "ユーザーは何にアレルギーがありますか?", "卵にアレルギーがある", C),
)  # fmt: skip

LATER: tuple[Update, ...] = (
    # A relative's fact beside the user's
    Update("distractor", "en", P, "Drinks oat milk", "Switched to soy milk",
           "What milk does the user drink?", "Husband drinks almond milk", P),
    Update("distractor", "de", B, "Wohnt in Leipzig", "Wohnt jetzt in Dresden",
           "Wo wohnt der Nutzer?", "Der Vater wohnt in Chemnitz", B),
    Update("distractor", "fr", B, "Travaille chez Airbus", "Travaille maintenant chez Thales",
           "Où travaille l'utilisateur ?", "Sa femme travaille chez Airbus", B),
    Update("distractor", "es", B, "Su médico es el doctor Ruiz",
           "Ahora su médico es la doctora Gil", "¿Quién es el médico del usuario?",
           "El médico de su hijo es el doctor Peña", B),
    Update("distractor", "ja", B, "京都に住んでいる", "今は神戸に住んでいる",
           "ユーザーはどこに住んでいますか?", "母は奈良に住んでいる", B),
    # Numeric limits
    Update("numeric", "en", C, "Daily calorie limit is 2000", "Daily calorie limit is now 1800",
           "What is the user's daily calorie limit?"),
    Update("numeric", "de", C, "Darf höchstens 2 Tassen Kaffee am Tag trinken",
           "Darf jetzt nur noch 1 Tasse Kaffee am Tag trinken",
           "Wie viel Kaffee darf der Nutzer trinken?"),
    Update("numeric", "fr", C, "Ne peut pas dépenser plus de 50 euros par repas",
           "Ne peut plus dépenser que 35 euros par repas",
           "Combien l'utilisateur peut-il dépenser par repas ?"),
    Update("numeric", "es", C, "El alquiler máximo que puede pagar es 900 euros",
           "El alquiler máximo que puede pagar ahora es 1100 euros",
           "¿Cuánto alquiler puede pagar el usuario?"),
    Update("numeric", "pt", C, "Limite de gastos no cartão é 2000 reais",
           "Limite de gastos no cartão subiu para 3000 reais",
           "Qual é o limite do cartão do usuário?"),
    Update("numeric", "it", C, "Può correre al massimo 10 km per il ginocchio",
           "Ora può correre al massimo 5 km per il ginocchio",
           "Quanti km può correre l'utente?"),
    # Subscriptions cancelled
    Update("retraction", "en", P, "Subscribes to The Economist",
           "Cancelled The Economist subscription", "Which magazines does the user subscribe to?",
           "Subscribes to The Atlantic", P),
    Update("retraction", "fr", P, "Est abonné à Canal+", "A résilié son abonnement à Canal+",
           "À quels services l'utilisateur est-il abonné ?", "Est abonné à Deezer", P),
    Update("retraction", "pt", P, "Assina a Amazon Prime",
           "Cancelou a assinatura da Amazon Prime", "Que serviços o usuário assina?",
           "Assina o Globoplay", P),
    Update("retraction", "ja", P, "Netflixに加入している", "Netflixを解約した",
           "ユーザーはどの動画サービスに加入していますか?", "Huluに加入している", P),
    # "Turns out not ..."
    Update("retraction", "en", C, "Is allergic to penicillin",
           "Turns out not allergic to penicillin after all", "What is the user allergic to?",
           "Is allergic to latex", C),
    Update("retraction", "de", C, "Verträgt keine Laktose",
           "Hat sich herausgestellt, dass er Laktose doch verträgt",
           "Was verträgt der Nutzer nicht?", "Verträgt kein Gluten", C),
    Update("retraction", "es", C, "Es alérgico a las fresas",
           "Resulta que no es alérgico a las fresas", "¿A qué es alérgico el usuario?",
           "Es alérgico al marisco", C),
    Update("retraction", "it", C, "È intollerante al glutine",
           "In realtà non è intollerante al glutine", "A cosa è intollerante l'utente?",
           "È intollerante al lattosio", C),
    # "X, not Y"
    Update("correction", "en", B, "Anniversary is on June 12",
           "Anniversary is on June 21, not June 12", "When is the user's anniversary?"),
    Update("correction", "fr", B, "Est né à Lyon", "Est né à Lille, pas à Lyon",
           "Où l'utilisateur est-il né ?"),
    Update("correction", "pt", B, "O apartamento fica no 5º andar",
           "O apartamento fica no 6º andar, não no 5º",
           "Em que andar fica o apartamento do usuário?"),
    Update("correction", "ja", B, "誕生日は7月3日", "誕生日は7月13日、3日ではない",
           "ユーザーの誕生日はいつですか?"),
    Update("correction", "de", B, "Die Tochter heißt Lena", "Die Tochter heißt Lina, nicht Lena",
           "Wie heißt die Tochter des Nutzers?"),
    # Plans
    Update("plan", "en", B, "Lives in Leeds", "Moving to Glasgow in August",
           "Where does the user live?"),
    Update("plan", "fr", B, "Habite à Lille", "Va déménager à Nantes le mois prochain",
           "Où habite l'utilisateur ?"),
    Update("plan", "it", B, "Lavora da Barilla", "Inizierà da Lavazza a settembre",
           "Dove lavora l'utente?"),
    Update("plan", "pt", B, "Mora em Campinas", "Vai se mudar para Santos no próximo mês",
           "Onde o usuário mora?"),
    Update("plan", "de", B, "Arbeitet bei SAP", "Fängt im Juli bei Siemens an",
           "Wo arbeitet der Nutzer?"),
)  # fmt: skip
"""Written after the rule was tuned on the first held-out run, from classes it had few of;
appended as numbers 61 and up, scored blind once (`docs/benchmarks.md`)."""


def sequences() -> Iterator[dict[str, Any]]:
    """One JSONL object per update, with the fillers of its language around it."""
    for number, update in enumerate((*UPDATES, *LATER), start=1):
        fillers = FILLERS[update.lang]
        said = [
            {"text": fillers[0][0], "category": fillers[0][1], "days_ago": 300},
            {"text": update.before, "category": update.category, "days_ago": 200},
            {"text": fillers[1][0], "category": fillers[1][1], "days_ago": 150},
        ]
        if update.extra is not None:
            said.append({"text": update.extra, "category": update.extra_category or update.category,
                         "days_ago": 100})  # fmt: skip
        said += [
            {"text": fillers[2][0], "category": fillers[2][1], "days_ago": 40},
            {
                "text": update.now,
                "category": update.category,
                "days_ago": 0 if update.kind == "plan" else 5,
            },  # a plan's day lies ahead
        ]
        current, stale = update.labels()
        yield {
            "id": f"held_out-{update.kind}-{update.lang}-{number:03d}",
            "kind": update.kind,
            "lang": update.lang,
            "split": "held_out",
            "statements": said,
            "query": update.query,
            "current": current,
            "stale": stale,
            "as_of_days_ago": None,
        }


def main() -> int:
    for item in sequences():
        sys.stdout.write(json.dumps(item, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
