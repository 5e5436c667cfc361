"""The injection rules: each is a name (the reason recorded when it fires) and a pattern.

They read every view `normalise.views` produces (canonical text, its Latin skeleton, decoded
payloads), so a rule is written once in plain words. Instructions are recognised in the
languages the default embedder reads best (English, German, French, Spanish, Italian,
Portuguese, Dutch, Polish, Turkish, Russian, Ukrainian, Arabic, Hindi, Chinese, Japanese,
Korean): an override of earlier instructions, a persona change, a request for secrets, a role
marker, a tool or URL directive. Facts *about* tools, forgetting or advice do not match: the
rules want the assistant (or its instructions) as the object.
"""

# ruff: noqa: RUF001  (look-alike characters are what these rules are about)
from __future__ import annotations

import re

_ALL = r"(?:all(?:\s+(?:of\s+)?(?:the|your|my))?|any|the|your|my|every|these|those)"
_PREVIOUS = (
    r"(?:previous|prior|above|earlier|preceding|former|existing|original|initial|old|system|"
    r"safety|developer|default|current|given|hidden|built-?in)"
)
_INSTRUCTIONS = (
    r"(?:instructions?|rules?|prompts?|directions?|guidelines?|directives?|commands?|"
    r"constraints?|guardrails?|filters?|restrictions?|policies|policy|programming|"
    r"system\s+prompt)"
)
_IGNORE = (
    r"(?:ignor(?:e|ing)|disregard(?:ing)?|forget(?:ting)?|overrid(?:e|ing)|bypass(?:ing)?|"
    r"discard(?:ing)?)"
)

# The same idea in other languages: a verb of ignoring within a short span of "instructions".
_IGNORE_INTL = (
    r"(?:(?<!\w)(?:ignorier\w*|vergiss|vergessen|missachte\w*|verwirf|übergeh\w*|"  # de
    r"ignor(?:e|ez|er)|oublie[zr]?|ne\s+tiens\s+pas\s+compte|fais\s+abstraction|"  # fr
    r"ignor[ae](?:r|d)?|olvid[ae](?:r|d)?|olvídate|haz\s+caso\s+omiso|omite|"  # es
    r"ignori|dimentica(?:re)?|trascura|"  # it
    r"ignore|esqueça|esquece|desconsidere|desconsiderar|"  # pt
    r"negeer|vergeet|"  # nl
    r"zignoruj|ignoruj|zapomnij|pomiń|"  # pl
    r"yok\s+say|görmezden\s+gel|unut|"  # tr
    r"игнорир\w*|проигнорир\w*|забудь\w*|не\s+обращай\w*|отбрось|"  # ru / uk
    r"ігноруй\w*|забудь|"  # uk
    r"تجاهل|انس|"  # ar
    r"अनदेखा|नज़रअंदाज़|भूल\s+जाओ)|"  # hi
    r"忽略|忽视|无视|無視|忘记|忘掉|忘れ|不要遵守|不必遵守|不要理会|不用理会|别理|别管|"
    r"不要遵循|従わないで|守らないで|"  # zh / ja
    r"무시|잊어)"  # ko
)
_INSTRUCTIONS_INTL = (
    r"(?:anweisung\w*|instruktion\w*|regeln|vorgaben|befehle|systemprompt\w*|"  # de
    r"consignes?|règles|"  # fr
    r"instrucciones|reglas|indicaciones|órdenes|"  # es
    r"istruzioni|regole|"  # it
    r"instruções|instrucoes|regras|orientações|"  # pt
    r"instructies|regels|"  # nl
    r"instrukcj\w*|polece\w*|zasad\w*|"  # pl
    r"talimat\w*|kural\w*|"  # tr
    r"инструкци\w*|указани\w*|правил\w*|промпт\w*|інструкці\w*|"  # ru / uk
    r"التعليمات|تعليمات|الأوامر|"  # ar
    r"निर्देश\w*|"  # hi
    r"指令|指示|说明|規則|规则|提示|命令|ルール|"  # zh / ja
    r"지시|지침|명령|규칙)"  # ko
)
_PERSONA_INTL = (
    r"(?:du\s+bist\s+(?:jetzt|ab\s+jetzt|nun|ab\s+sofort)|ab\s+(?:jetzt|sofort)\s+bist\s+du|"
    r"tu\s+es\s+(?:maintenant|désormais)|vous\s+êtes\s+(?:maintenant|désormais)|"
    r"(?:à\s+partir\s+de\s+maintenant|désormais),?\s+(?:tu|vous)\b|"
    r"ahora\s+eres|a\s+partir\s+de\s+ahora,?\s+(?:eres|serás|actúa|responde)|"
    r"ora\s+sei|d'ora\s+in\s+poi,?\s+(?:sei|sarai|rispondi|agisci)|"
    r"agora\s+você\s+é|a\s+partir\s+de\s+agora,?\s+(?:você|tu|responda|aja)|"
    r"je\s+bent\s+nu|vanaf\s+nu\s+ben\s+je|od\s+teraz\s+jesteś|artık\s+sen\b|"
    r"теперь\s+ты|ты\s+теперь|с\s+этого\s+момента\s+ты|відтепер\s+ти|"
    r"你现在是|从现在开始你|從現在開始你|あなたは今から|今からあなたは|지금부터\s*너는|"
    r"أنت\s+الآن|अब\s+तुम)"
)
_REVEAL_INTL = (
    r"(?:(?:zeig\w*|gib|verrate\w*|nenne)\b[^.\n]{0,30}(?:system-?prompt|anweisungen|passwort)|"
    r"(?:révèle|montre|affiche|donne)\w*\b[^.\n]{0,30}(?:prompt\s+système|instructions|mot\s+de\s+passe)|"
    r"(?:revela|muestra|muéstrame|dime)\w*\b[^.\n]{0,30}(?:prompt\s+del\s+sistema|instrucciones|contraseña)|"
    r"(?:rivela|mostra)\w*\b[^.\n]{0,30}(?:prompt\s+di\s+sistema|istruzioni|password)|"
    r"(?:revele|mostre|mostra)\w*\b[^.\n]{0,30}(?:prompt\s+do\s+sistema|instruções|senha)|"
    r"(?:покажи|раскрой|выведи|назови)\w*\b[^.\n]{0,30}(?:системн\w+\s+промпт|инструкци\w*|пароль)|"
    r"(?:显示|泄露|告诉我|輸出|输出|透露).{0,10}(?:系统提示|系統提示|系统指令|密码)|"
    r"システムプロンプト.{0,10}(?:教えて|表示|見せて)|시스템\s*프롬프트.{0,10}(?:보여|알려|출력))"
)
_VERBS_REVEAL = r"(?:reveal|disclose|leak|expose|dump|exfiltrate|divulge)"
_VERBS_SHOW = (
    r"(?:reveal|disclose|leak|expose|dump|print|output|show|repeat|display|give|tell|recite|"
    r"share|send|spell\s+out|write\s+out|paste)"
)
_SECRETS = (
    r"(?:system\s+prompt|(?:your|the)\s+(?:(?:hidden|secret|initial|original|system|developer|"
    r"internal|full|real|confidential)\s+)?(?:instructions|prompt|rules|message|configuration|"
    r"guidelines|directives)|passwords?|secrets?|api[\s_-]?keys?|"
    r"credentials?|access\s+tokens?|private\s+keys?|env(?:ironment)?\s+variables|"
    r"everything\s+above|the\s+text\s+above|initial\s+prompt|pre-?prompt)"
)
_IMPERATIVE = (
    r"(?:^|[.!?;:]\s*|\b(?:please|then|now|immediately|always|and|you\s+(?:must|should|will)|"
    r"also|first|next|must|should|shall|will)\s+)"
)
_ASSISTANT = r"(?:the\s+)?(?:assistant|ai|model|bot|chatbot|agent|llm|you|gpt|claude|chatgpt)"
_ROLE = r"(?:system|assistant|developer|admin(?:istrator)?|root|operator|sudo|ai|bot|human|user)"

_SOURCES: tuple[tuple[str, str], ...] = (
    (
        "override of earlier instructions",
        rf"\b{_IGNORE}\s+(?:{_ALL}\s+)*(?:of\s+)?(?:the\s+)?{_PREVIOUS}\s+(?:\w+\s+)?"
        rf"{_INSTRUCTIONS}\b",
    ),
    (
        "override of earlier instructions",
        rf"\b{_IGNORE}\s+(?:all\s+(?:of\s+)?)?(?:your|the\s+assistant'?s|the\s+ai'?s|the\s+model'?s)"
        rf"\s+(?:\w+\s+)?{_INSTRUCTIONS}\b",
    ),
    (
        "override of earlier instructions",
        r"\b(?:ignore|disregard|forget)\s+(?:everything|all|anything)\s+(?:(?:that\s+)?you\s+"
        r"(?:were|have\s+been|was)\s+(?:told|given|instructed)|(?:written\s+)?above|before\s+this|"
        r"(?:you\s+)?(?:know|learned)\s+(?:so\s+far|before)|previously|said\s+before|prior)",
    ),
    (
        "override of earlier instructions",
        r"\b(?:ignore|disregard)\s+(?:all\s+)?(?:of\s+)?(?:the\s+|what\s+is\s+|what'?s\s+)?"
        r"(?:above|foregoing|preceding)\b|"
        rf"{_IGNORE_INTL}\s+(?:(?:todo\s+)?lo\s+anterior|todo\s+lo\s+(?:dicho|previo)|tout\s+ce\s+qui\s+"
        r"précède|alles\s+(?:vorherige|obige|bisherige|oben)|tudo\s+(?:acima|o\s+que\s+foi\s+dito)|"
        r"tutto\s+(?:quello\s+)?(?:sopra|precedente|detto)|всё\s+(?:выше|предыдущее|сказанное)|"
        r"以上|上述|上面)",
    ),
    (
        "override of earlier instructions",
        r"(?:^|[.!?;:,]\s*|\b(?:please|now|just|simply|and|then|so|you\s+(?:must|should|can|may|will|"
        r"need\s+to|have\s+to))\s+)(?:ignore|disregard|forget|override|bypass|skip|drop|discard|"
        r"abandon|neglect|suspend|disable|turn\s+off|set\s+aside|throw\s+out)\s+(?:[\w']+\s+){0,5}?"
        r"(?:instructions?|rules|guidelines|guardrails|directives?|system\s+(?:message|prompt)s?|"
        r"prompts?|programming|constraints|restrictions|filters|polic(?:y|ies)|safety\s+\w+|"
        r"training|commands|orders|content\s+policy|ethics|principles)\b",
    ),
    (
        "override of earlier instructions",
        r"(?:ignoreprevious|ignoreallprevious|ignoreallinstructions|disregardprevious|"
        r"forgetprevious|forgetallprevious|ignoretheabove|disregardtheabove)",
    ),
    (
        "override of earlier instructions",
        rf"{_IGNORE_INTL}[^.\n]{{0,40}}?{_INSTRUCTIONS_INTL}|"
        rf"{_INSTRUCTIONS_INTL}[^.\n]{{0,30}}?{_IGNORE_INTL}",
    ),
    (
        "override of earlier instructions",
        r"\b(?:ignore[zr]?|oublie[zr]?)\s+(?:toutes\s+)?(?:les|tes|vos|ces)\s+(?:\w+\s+){0,2}"
        r"(?:instructions|consignes|règles|directives)\b",
    ),
    (
        "override of earlier instructions",
        r"\b(?:vergiss|oublie|olvida|dimentica|esqueça|vergeet|zapomnij|забудь)\s+"
        r"(?:alles|tout|todo|tutto|tudo|alles|wszystko|всё|все)\b",
    ),
    (
        "new instructions",
        r"\b(?:new|updated|real|actual|true|revised|override)\s+(?:system\s+)?(?:instructions?|"
        r"rules?|system\s+prompt|directives?|orders?)\s*[:\-]|"
        r"\b(?:neue\s+anweisungen|nouvelles\s+instructions|nuevas\s+instrucciones|"
        r"nuove\s+istruzioni|novas\s+instruções|новые\s+инструкции|新的指令|新指令)\s*[:：\-]",
    ),
    (
        "new instructions",
        r"\byour\s+(?:new|real|true|only)\s+(?:instructions?|task|goal|purpose|job|mission|"
        r"objective)\s+(?:is|are)\b|\b(?:the\s+)?(?:instructions|rules)\s+(?:above|before)\s+"
        r"(?:are|were)\s+(?:void|cancel+ed|obsolete|no\s+longer\s+valid|fake|outdated)",
    ),
    (
        "standing order to the assistant",
        rf"\b(?:always|never|must|should)\s+(?:{_VERBS_REVEAL}|obey|comply\s+with\s+(?:any|all|"
        r"every)|follow\s+(?:these|the\s+following|my\s+(?:instructions|orders|commands)))\b",
    ),
    (
        "standing order to the assistant",
        rf"\b{_ASSISTANT}\s+(?:must|should|shall|will|has\s+to|have\s+to|need\s+to|are\s+"
        r"(?:required|instructed|allowed|permitted)\s+to|is\s+(?:required|instructed|allowed|"
        r"permitted)\s+to)\s+(?:now\s+|from\s+now\s+on\s+|henceforth\s+)?(?:always\s+|never\s+)?"
        rf"(?:ignore|obey|comply|run|execute|send|forward|disable|bypass|{_VERBS_REVEAL})\b",
    ),
    (
        "standing order to the assistant",
        r"\b(?:never|do\s+not|don't)\s+(?:refuse|decline|say\s+no|apologi[sz]e|add\s+(?:any\s+)?"
        r"(?:warnings?|disclaimers?))\b[^.\n]{0,40}\b(?:request|anything|question|user|me)\b|"
        r"\b(?:answer|respond|reply|operate|act|talk|speak)\w*\s+without\s+(?:any\s+)?"
        r"(?:restrictions|limits|filters|censorship|safety\s+(?:checks|guidelines|rules))\b",
    ),
    (
        "request for secrets",
        rf"\b{_VERBS_SHOW}\s+(?:me\s+|us\s+|back\s+)?(?:the\s+|all\s+|any\s+|your\s+)?"
        rf"(?:full\s+|entire\s+|complete\s+|exact\s+)?{_SECRETS}\b",
    ),
    (
        "request for secrets",
        rf"\b{_VERBS_SHOW}\s+(?:me\s+)?(?:the\s+)?(?:full\s+|entire\s+|exact\s+)?(?:contents?|text|"
        rf"wording|words)\s+of\s+(?:your\s+|the\s+)?{_SECRETS}|\b(?:repeat|print|output|show|write|recite|copy)\s+"
        r"(?:all\s+)?(?:of\s+)?(?:the\s+)?(?:words|text|everything|lines|sentences|instructions|"
        r"content|messages?)\s+(?:above|before\s+this|(?:at\s+)?the\s+(?:start|beginning))\b|"
        r"\bstarting\s+with\s+[\"'“]?you\s+are\b",
    ),
    (
        "request for secrets",
        r"\bwhat\s+(?:is|are|were)\s+your\s+(?:system\s+prompt|(?:initial|original|hidden|secret)"
        r"\s+(?:instructions|prompt|rules))\b|" + _REVEAL_INTL,
    ),
    (
        "persona change",
        r"\b(?:(?:you\s+are|you're)\s+now\s+(?!able\b|free\s+to\b|ready\b|done\b|connected\b|"
        r"logged\b|subscribed\b|registered\b|on\s+the\b|in\s+the\s+(?:queue|list)\b)|you\s+are\s+no\s+longer|you\s+will\s+now\s+(?:be|act"
        r"|respond|answer)|from\s+now\s+on,?\s+(?:you|act|respond|reply|answer|behave|speak|talk|"
        r"pretend)|henceforth,?\s+you|(?:^|\byou\s+(?:will|must|should|shall|are\s+to)?\s*)"
        r"act\s+as\b|pretend\s+(?:to\s+be|you\s+are|you're|"
        r"that\s+you)|role-?play\s+as|roleplay\s+as|(?:^|\byou\s+(?:will\s+|must\s+|should\s+)?)play\s+the\s+role\s+of|stay\s+in\s+character|"
        r"respond\s+as\s+if\s+you\s+(?:were|are)|your\s+new\s+(?:name|persona|identity|role)\s+is|"
        r"imagine\s+(?:that\s+)?you\s+are\s+(?:an?\s+)?(?:ai|assistant|model|chatbot|unrestricted|"
        r"unfiltered|evil|jailbroken|uncensored|hacker)|let'?s\s+play\s+a\s+game\s+(?:where|in\s+"
        r"which)\s+you|switch\s+to\s+(?:developer|god|admin|debug|jailbreak|unrestricted|dan|evil|"
        r"unfiltered)\s+mode|(?:enable|activate|enter)\s+(?:the\s+)?"
        r"(?:developer|god|admin|debug|jailbreak|unrestricted|dan)\s+mode|developer\s+mode\s+"
        r"(?:enabled|on|activated)|jailbreak\s+(?:yourself|the\s+(?:assistant|model|ai)|mode)|"
        r"do\s+anything\s+now|you\s+have\s+no\s+(?:rules|restrictions|limits|content\s+policy|"
        r"filters|guidelines))",
    ),
    (
        "persona change",
        r"(?-i:\bDAN\b)(?:\s+mode|,?\s+(?:an?\s+)?AI\b)|\b(?:you\s+are|as)\s+(?-i:DAN)\b",
    ),
    ("persona change", _PERSONA_INTL),
    (
        "persona change",
        r"\byou(?:'re|\s+are)\s+(?:(?-i:DAN)|an?\s+(?:\w+\s+){0,2}(?:ai|model|assistant|bot|chatbot)"
        r"(?:\s+\w+){0,4})\s+now\b|(?:^|[.!?;:]\s*|\byou\s+(?:will|must|should|shall)?\s*)"
        r"(?:act|behave|respond|answer|talk|speak)\s+(?:like|as)\s+(?:an?\s+|the\s+)?(?:\w+\s+){0,2}"
        r"(?:ai|model|assistant|bot|chatbot|gpt|hacker|villain|unfiltered|unrestricted|jailbroken|"
        r"uncensored|evil)\b",
    ),
    (
        "persona change",
        r"\b(?:i\s+want|i'd\s+like|i\s+would\s+like|i\s+need)\s+you\s+to\s+(?:act|pretend|behave|"
        r"role-?play|play\s+the\s+role|be\s+my|become|respond\s+as|answer\s+as)\b|"
        r"\byou\s+are\s+going\s+to\s+(?:pretend|act|be\s+(?:an?\s+)?(?:ai|assistant|model|bot|dan))\b",
    ),
    (
        "hidden instructions",
        r"\b(?:decode|decrypt|unscramble|translate)\s+(?:this|the\s+following|it|and\s+(?:then\s+)?"
        r"(?:follow|execute|run|obey|do|apply))\b[^.\n]{0,30}(?:follow|execute|run|obey|apply|:)|"
        r"\b(?:follow|execute|obey|apply)\s+(?:the\s+)?(?:decoded|hidden|encoded|embedded|secret)\s+"
        r"(?:instructions?|commands?|text|message)",
    ),
    (
        "role marker",
        rf"^[\s\[\(<{{#*>|\-=\"'`]*{_ROLE}(?:\s+(?:message|prompt|note|notice|override|instruction|"
        r"update|alert|command|directive|priority|mode))?\s*[\]\)>}*|\-=\"'`]*\s*[:：>]\s*"
        r"(?!(?:prefers|likes|uses|runs|is|has|works|lives|wants|owns|loves|hates|needs)\b)\S|"
        rf"^\s*\[{_ROLE}(?:\s+\w+)?\]|^\s*\({_ROLE}\)|^[\s#*\-=]*{_ROLE}\s*[\-=*#]{{2,}}|"
        r"<\|?(?:im_start|im_end|system|endoftext|eot_id|start_header_id|end_header_id|user|"
        r"assistant)\|?>|\[/?INST\]|<<\s*/?SYS\s*>>|</?\s*(?:system|assistant|instructions?|"
        r"admin|developer|sys)\s*>|#{2,}\s*(?:instruction|system|response|new\s+task)|"
        r"[\"']role[\"']\s*:\s*[\"'](?:system|developer|assistant)[\"']|"
        r"^\s*(?:система|системное\s+сообщение|系统|系統|システム|시스템|sistema|système|"
        r"systemnachricht)\s*[:：]|^\s*(?:override|jailbreak|admin\s+override|priority\s+"
        r"instruction|developer\s+note)\s*[:：]",
    ),
    (
        "tool directive",
        rf"{_IMPERATIVE}(?:call|invoke|execute|trigger|run|use)\s+(?:the\s+|a\s+|this\s+)?"
        r"(?:[\w.-]+\s+){0,2}(?:tool|function|command|plugin|shell|api\s+endpoint)\b"
        r"(?!\s+(?:calling|at\s+work|for\s+(?:work|my)))",
    ),
    (
        "tool directive",
        r"\b(?:curl|wget|iwr|invoke-webrequest)\b[^\n]{0,200}\|\s*(?:ba|z|da)?sh\b|"
        r"\brm\s+-rf\s+[/~*]|\b(?:exec|eval)\(|\bos\.system\(|\bsubprocess\.\w+\(|"
        r"\b(?:run|execute)\s+(?:this|the\s+following)\s*(?:code|script|command)?\s*:",
    ),
    (
        "tool-call markup",
        r"[{,]\s*[\"'](?:tool(?:_name|_calls?)?|function(?:_call)?|action|recipient_name)[\"']\s*:|"
        r"[\"'](?:arguments|parameters|args|input)[\"']\s*:\s*[{\[\"']|"
        r"</?\s*(?:function_calls?|tool_calls?|tool_use|tool_result|invoke|call)\b[^>]{0,80}>|"
        r"\{\{\s*(?:conversation|chat|history|messages?|memory|memories|system_prompt|secrets?|"
        r"user_data)\s*\}\}|\[\[\s*(?:call|tool|run|exec)\s*:|"
        r"(?im:^\s*(?:tool|function|action)\s*:\s*[a-z]+_[a-z_]+\b)|\baction\s+input\s*:",
    ),
    (
        "URL directive",
        rf"{_IMPERATIVE}(?:visit|open|fetch|browse|navigate\s+to|go\s+to|load|click|download|"
        r"send|post|upload|forward|exfiltrate|submit|report|email|mail|transmit|leak|copy)\b"
        r"[^\n]{0,80}(?:https?://|www\.|\b\w+\.(?:com|net|org|io|xyz|ru|cn|tk|top)/)",
    ),
    (
        "URL directive",
        r"!\[[^\]]*\]\(\s*https?://|(?:https?://)[^\s]*(?:\?|&)(?:q|data|d|exfil|c|p|payload|"
        r"msg|chat|log)=\{|(?:https?://)[^\s]*\{(?:chat|conversation|history|data|secret|memory)",
    ),
    (
        "URL directive",
        r"\b(?:send|forward|email|mail|copy|upload|transmit|leak|post|bcc|cc)\s+(?:all\s+|every\s+|"
        r"each\s+|the\s+)?(?:(?:user'?s?|conversation|chat|message|future|of\s+the|the)\s+)*"
        r"(?:messages?|conversations?|chats?|logs?|history|files?|data|transcripts?|replies|"
        r"answers|secrets|passwords?|documents?)\b[^.\n]{0,40}\bto\s+(?:\S+@\S+|https?://|my\s+"
        r"(?:inbox|server|email|address|webhook|endpoint)|this\s+(?:address|url|endpoint))",
    ),
    (
        "instruction to the assistant",
        r"^\s*(?:hey\s+|dear\s+|attention\s+|note\s+to\s+(?:the\s+)?)?(?:assistant|ai|chatgpt|"
        r"claude|gpt|gemini|llm|model|bot|chatbot|agent)\s*[,:!]\s*(?:please\s+)?(?:ignore|"
        r"forget|send|forward|reveal|print|show|output|disregard|execute|run|call)\b",
    ),
    (
        "instruction to the assistant",
        r"\b(?:do\s+not|don't|never)\s+(?:tell|inform|mention\s+(?:this\s+)?to|warn|let|alert|"
        r"reveal\s+(?:this\s+)?to|notify)\s+(?:the\s+)?(?:user|anyone|them|the\s+human|"
        r"the\s+operator)\b",
    ),
    (
        "instruction to the assistant",
        r"\b(?:when|whenever|if)\s+(?:the\s+)?(?:user|anyone|someone|they|a\s+customer)\s+"
        r"(?:asks?|says?|mentions?|types?|requests?|writes?)\b[^.]{0,80}\b(?:output|send|"
        r"forward|reveal|claim|insist|recommend)\b",
    ),
    (
        "instruction to the assistant",
        r"\b(?:in\s+(?:every|all|each)\s+(?:future\s+)?(?:answers?|responses?|replies|"
        r"conversations?|sessions?)|in\s+future\s+(?:conversations|sessions|answers)),?\s+"
        r"(?:you\s+)?(?:recommend|claim|insert|append|include\s+(?:a\s+)?(?:link|url|image|pixel))\b",
    ),
    (
        "instruction to the assistant",
        r"\bthis\s+(?:is\s+an?\s+)?(?:instruction|directive|order|command)\s+(?:to|for)\s+"
        r"(?:the\s+)?(?:assistant|ai|model|you)\b|\b(?:attention|note|message)\s+(?:to|for)\s+"
        r"(?:the\s+)?(?:assistant|ai|model|llm|language\s+model)\b",
    ),
)

RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(source, re.IGNORECASE | re.MULTILINE)) for name, source in _SOURCES
)
