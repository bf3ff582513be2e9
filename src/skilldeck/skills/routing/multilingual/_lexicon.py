"""A small bilingual lexicon: common work vocabulary → English, for query expansion.

Nearly every published skill is written in English, so a request in Spanish,
Portuguese, French, German or Chinese shares few words with the skill that serves
it. Translating the handful of content words that matter for routing ("factura" →
invoice, "表格" → spreadsheet) recovers most of that; the rest (product names, file
formats, code identifiers) is usually written the same in every language.

The table is generic office/software/business vocabulary, not a list tuned to any
benchmark. Expansion runs only when the query shows a non-English signal (accents,
CJK, or foreign function words), so an English "red button" never becomes "network".
Each line: ``english words | foreign term, foreign term, ...`` (an indented line
continues the previous one); a foreign term may be a phrase (matched as a substring
of the accent-folded, lower-cased query).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Protocol

from skilldeck.skills.routing.tokenize import CJK_RANGES, STOPWORDS, fold, tokenize

__all__ = ["Translator", "looks_foreign", "tokenize_query", "translate"]

_TABLE = """
document | documento, document, dokument, 文档, 文件
file | archivo, arquivo, fichier, datei, 文件
folder directory | carpeta, pasta, dossier, ordner, verzeichnis, 文件夹, 目录
spreadsheet excel | hoja de calculo, planilha, tableur, feuille de calcul, tabelle,
    tabellenkalkulation, 表格, 电子表格
table | tabla, tabela, tableau, 表
pdf | pdf
text | texto, texte, 文本, 文字
extract | extraer, extrair, extraire, extrahieren, 提取, 抽取
convert | convertir, converter, konvertieren, umwandeln, 转换
presentation slides | presentacion, diapositivas, apresentacao, slides, praesentation, folien,
    演示, 幻灯片, 演示文稿
image picture | imagen, imagem, foto, image, bild, 图片, 图像
photo | fotografia, photo, 照片
video | video, vidéo, 视频
audio sound | audio, sonido, ton, 音频, 声音
music | musica, musique, musik, 音乐
transcribe transcription | transcribir, transcrever, transcrire, transkribieren, transcripcion,
    转录, 转写
translate translation | traducir, traduzir, traduire, ubersetzen, traduccion, traducao,
    ubersetzung, 翻译
email | correo, e-mail, courriel, 邮件, 电子邮件
newsletter | boletin, newsletter, 简报
calendar schedule | calendario, agenda, calendrier, kalender, termin, 日历, 日程
meeting | reunion, reuniao, reunion, besprechung, sitzung, 会议
notes | notas, notes, notizen, 笔记
invoice | factura, fatura, facture, rechnung, 发票
payment pay | pago, pagamento, paiement, zahlung, 支付, 付款
price pricing | precio, preco, prix, preis, 价格, 定价
tax | impuesto, imposto, impot, steuer, 税
accounting bookkeeping | contabilidad, contabilidade, comptabilite, buchhaltung, 会计, 记账
budget | presupuesto, orcamento, budget, 预算
finance financial | finanzas, financas, finance, finanzen, 财务, 金融
sales | ventas, vendas, ventes, vertrieb, 销售
customer client | cliente, client, kunde, kunden, 客户
contract | contrato, contrat, vertrag, 合同
legal law | legal, juridico, juridique, recht, rechtlich, 法律
lawyer | abogado, advogado, avocat, anwalt, 律师
employee staff | empleado, funcionario, employe, mitarbeiter, 员工
hiring recruit | contratacion, contratar, recrutamento, recrutement, recruter, einstellung, 招聘
job | empleo, trabajo, emprego, vaga, emploi, stelle, 工作, 职位
resume cv | curriculum, curriculo, lebenslauf, 简历
interview | entrevista, entretien, vorstellungsgesprach, 面试
payroll salary | nomina, salario, folha de pagamento, paie, salaire, gehalt, lohn, 工资, 薪资
report | informe, reporte, relatorio, rapport, bericht, 报告
summary summarize | resumen, resumir, resumo, resume, resumer, zusammenfassung, zusammenfassen,
    总结, 摘要
chart graph | grafico, graphique, diagramm, 图表
diagram | diagrama, diagramme, diagramm, 流程图, 示意图
architecture | arquitectura, arquitetura, architecture, architektur, 架构
language | idioma, idiomas, lingua, linguas, langue, langues, sprache, sprachen, 语言
application app | aplicacion, aplicacao, aplicativo, application, anwendung, 应用程序
nda confidentiality | acuerdo de confidencialidad, confidencialidad, confidencialidade,
    confidentialite, geheimhaltung, vertraulichkeit, 保密协议
dashboard | tablero, panel, painel, tableau de bord, 仪表板, 看板
data | datos, dados, donnees, daten, 数据
analysis analyze | analisis, analise, analyse, analysieren, analisar, analizar, analyser, 分析
statistics | estadistica, estatistica, statistique, statistik, 统计
database | base de datos, banco de dados, base de donnees, datenbank, 数据库
query | consulta, requete, abfrage, 查询
sql | sql
table schema | esquema, schema, 表结构
test testing | prueba, pruebas, teste, testes, testar, probar, tester, testen, 测试
unit test | prueba unitaria, teste unitario, test unitaire, unittest, 单元测试
bug error | error, erro, erreur, fehler, 错误, 报错, 缺陷
fix | arreglar, corregir, consertar, corrigir, reparer, corriger, beheben, reparieren, 修复, 修
debug | depurar, deboguer, debuggen, 调试
crash | fallo, falha, plantage, absturz, 崩溃
fail failing | fallar, fallando, falla, falhar, falhando, echouer, echoue, fehlschlagen,
    schlagt fehl, 失败
slow performance | lento, lenta, lent, langsam, rendimiento, desempenho, performance, leistung,
    性能, 慢
optimize | optimizar, otimizar, optimiser, optimieren, 优化
refactor | refactorizar, refatorar, refactoriser, refaktorisieren, 重构
code | codigo, code, 代码
review | revision, revisar, revisao, revue, relire, uberprufen, prufen, 审查, 评审
code review | revision de codigo, revisao de codigo, revue de code, code-review, 代码审查
commit | commit, 提交
branch | rama, ramo, branche, zweig, 分支
merge conflict | conflicto, conflito, conflit, konflikt, 冲突
deploy deployment | desplegar, despliegue, implantar, deploy, deployer, deployer,
    bereitstellen, 部署
server | servidor, serveur, 服务器
cloud | nube, nuvem, nuage, 云
container docker | contenedor, conteneur, 容器
install | instalar, installer, installieren, 安装
configure configuration setup | configurar, configuracion, configuracao, configurer,
    konfigurieren, einrichten, 配置
upgrade update | actualizar, atualizar, mettre a jour, aktualisieren, 升级, 更新
migrate migration | migrar, migracion, migracao, migrer, migrieren, 迁移
security | seguridad, seguranca, securite, sicherheit, 安全
vulnerability | vulnerabilidad, vulnerabilidade, vulnerabilite, schwachstelle,
    sicherheitslucke, 漏洞
password secret | contrasena, senha, mot de passe, passwort, 密码
login authentication | inicio de sesion, autenticacion, autenticacao, authentification,
    anmeldung, 登录, 认证
permission | permiso, permissao, autorisation, berechtigung, 权限
monitoring | monitoreo, monitoramento, surveillance, uberwachung, 监控
logs | registros, journaux, protokolle, 日志
alert | alerta, alerte, warnung, 告警, 警报
incident outage | incidente, incident, caida, panne, ausfall, 故障, 事故
backup | respaldo, copia de seguridad, sauvegarde, sicherung, 备份
website web | sitio web, pagina web, site, site web, webseite, 网站, 网页
page | pagina, page, seite, 页面
landing page | pagina de aterrizaje, pagina de destino, page d'atterrissage, 落地页
design | diseno, design, conception, gestaltung, entwurf, 设计
logo brand | logotipo, marca, marque, marke, 品牌, 标志
color theme | color, cor, couleur, farbe, tema, theme, 颜色, 主题
font | fuente, fonte, police, schrift, 字体
animation | animacion, animacao, animation, 动画
game | juego, jogo, jeu, spiel, 游戏
mobile app | aplicacion movil, aplicativo, app movil, application mobile, 移动应用, 手机应用, 应用
android | android, 安卓
ios iphone | iphone, 苹果
api | api, 接口
documentation docs | documentacion, documentacao, documentation, dokumentation, 文档
readme | readme
write writing | escribir, escrever, ecrire, schreiben, redactar, redigir, rediger, 写, 撰写
article blog post | articulo, artigo, article, artikel, 文章, 博客
copy copywriting | texto publicitario, redaccion publicitaria, 文案
marketing | marketing, mercadotecnia, 营销, 市场营销
seo | seo, posicionamiento, referencement, 搜索引擎优化
advertising ads | publicidad, anuncios, publicidade, anuncio, publicite, werbung, anzeigen, 广告
social media | redes sociales, redes sociais, reseaux sociaux, soziale medien, 社交媒体
campaign | campana, campanha, campagne, kampagne, 活动
competitor | competidor, concorrente, concurrent, wettbewerber, konkurrent, 竞争对手, 竞品
market research | investigacion de mercado, pesquisa de mercado, etude de marche,
    marktforschung, 市场调研
product | producto, produto, produit, produkt, 产品
requirements spec | requisitos, exigences, anforderungen, especificacion, especificacao,
    specification, 需求
plan planning | plan, planificar, planejar, planifier, planen, planung, 计划, 规划
project | proyecto, projeto, projet, projekt, 项目
task todo | tarea, tarefa, tache, aufgabe, 任务
team | equipo, equipe, team, 团队
roadmap | hoja de ruta, roteiro, feuille de route, 路线图
search | buscar, busqueda, pesquisar, busca, rechercher, recherche, suchen, suche, 搜索, 查找
scrape scraping crawl | raspar, extraer datos, rastrear, raspagem, extraire des donnees,
    scrapen, 爬取, 抓取, 爬虫
research | investigacion, pesquisa, recherche, forschung, 研究, 调研
paper scientific | articulo cientifico, artigo cientifico, article scientifique,
    wissenschaftlich, 论文
citation reference | cita, citacao, citation, zitat, quellenangabe, 引用, 参考文献
experiment | experimento, experience, experiment, 实验
machine learning | aprendizaje automatico, aprendizado de maquina, apprentissage automatique,
    maschinelles lernen, 机器学习
model training train | modelo, entrenar, treinar, entrainer, trainieren, entrenamiento,
    treinamento, 模型, 训练
fine-tune | ajuste fino, afinar, ajustar finamente, feinabstimmung, 微调
embedding vector | incrustacion, vetor, vecteur, vektor, 向量, 嵌入
chatbot bot | bot, chatbot, robot de chat, 机器人, 聊天机器人
agent | agente, agent, 智能体, 代理
prompt | prompt, indicacion, 提示词
workflow automation | flujo de trabajo, automatizacion, fluxo de trabalho, automacao,
    flux de travail, automatisation, arbeitsablauf, automatisierung, 工作流, 自动化
message chat | mensaje, mensagem, message, nachricht, 消息, 聊天
notification | notificacion, notificacao, notification, benachrichtigung, 通知
form survey | formulario, encuesta, pesquisa, formulaire, sondage, formular, umfrage, 表单, 问卷
accessibility | accesibilidad, acessibilidade, accessibilite, barrierefreiheit, 无障碍, 可访问性
localization i18n | localizacion, localizacao, localisation, lokalisierung,
    internacionalizacion, 本地化, 国际化
map location | mapa, carte, karte, ubicacion, localizacao, 地图, 位置
weather | clima, tiempo, tempo, meteo, wetter, 天气
health medical | salud, medico, saude, sante, medizinisch, gesundheit, 医疗, 健康
gene protein | gen, genes, proteina, proteine, protein, 基因, 蛋白质
chemistry molecule | quimica, molecula, chimie, molecule, chemie, molekul, 化学, 分子
book | libro, livro, livre, buch, 书
story | historia, cuento, histoire, geschichte, 故事
learn teach course | aprender, ensenar, ensinar, curso, apprendre, enseigner, cours, lernen,
    lehren, kurs, 学习, 课程
exam study | examen, exame, estudiar, estudar, etudier, prufung, 考试, 复习
shop store ecommerce | tienda, loja, boutique, geschaft, laden, 商店, 电商
order | pedido, commande, bestellung, 订单
inventory stock | inventario, estoque, inventaire, lager, bestand, 库存
shipping delivery | envio, entrega, livraison, versand, lieferung, 物流, 配送
cost | costo, custo, cout, kosten, 成本
risk | riesgo, risco, risque, risiko, 风险
compliance regulation | cumplimiento, conformidade, conformite, regulacion, regulamento,
    reglementation, vorschrift, 合规, 法规
privacy gdpr | privacidad, privacidade, confidentialite, datenschutz, 隐私
terminal shell command | terminal, consola, comando, commande, befehl, 命令, 终端
script | script, guion, roteiro, 脚本
package library dependency | paquete, biblioteca, dependencia, pacote, paquet, bibliotheque,
    paket, bibliothek, abhangigkeit, 包, 依赖, 库
component | componente, composant, komponente, 组件
frontend | interfaz, interface, frontend, 前端
backend | backend, 后端
responsive | adaptable, responsivo, 响应式
screenshot | captura de pantalla, captura de tela, capture d'ecran, bildschirmfoto, 截图
browser | navegador, navigateur, browser, 浏览器
idea brainstorm | ideas, lluvia de ideas, ideias, idees, ideen, 头脑风暴, 点子
decision | decision, decisao, entscheidung, 决策
negotiation | negociacion, negociacao, negociation, verhandlung, 谈判
feedback | comentarios, retroalimentacion, retorno, avis, ruckmeldung, 反馈
complaint | queja, reclamacao, reclamation, beschwerde, 投诉
support ticket | soporte, suporte, assistance, ticket, 工单, 客服
onboarding | incorporacion, integracao, integration, einarbeitung, 入职
performance review evaluation | evaluacion de desempeno, avaliacao de desempenho, evaluation,
    leistungsbeurteilung, 绩效
"""

#: foreign function words that mark a query as non-English (accent-folded)
_MARKERS_TEXT = """el la los las una unos del al y para por con que como quiero necesito puedes mi
    este esta esto hacer o os um uma dos das na nas em pelo pela quero preciso voce fazer
    le les une des du et dans avec pour sur est sont je veux voudrais besoin faire mon ma
    der die das den dem ein eine einen und oder mit fur von zu ist sind ich bitte mochte
    mein meine kannst wie"""
_FOREIGN_MARKERS = frozenset(_MARKERS_TEXT.split())
_CJK_PATTERN = f"[{CJK_RANGES}]"  # not CJK_COMPATIBILITY_RANGE: see there
_WORD_RE = re.compile(r"[a-z0-9]+")
#: inflections tried when a word is not in the table verbatim (plural, feminine…)
_ENDINGS = ("s", "es", "en", "n", "e", "a", "o")


@lru_cache(maxsize=1)
def _tables() -> tuple[dict[str, tuple[str, ...]], list[tuple[str, tuple[str, ...]]]]:
    """(single foreign word → English tokens, [(phrase or CJK term, English tokens)])."""
    words: dict[str, tuple[str, ...]] = {}
    phrases: list[tuple[str, tuple[str, ...]]] = []
    for line in _joined_lines(_TABLE):
        english, _, foreign = line.partition("|")
        targets = tuple(tokenize(english))
        for raw in foreign.split(","):
            term = fold(raw.strip()).lower()
            if not term:
                continue
            if " " in term or _has_cjk(term):
                phrases.append((term, targets))
            else:
                words[term] = tuple(dict.fromkeys(words.get(term, ()) + targets))
    return words, phrases


def _has_cjk(text: str) -> bool:
    """Whether ``text`` holds a CJK character; ASCII text (most queries) skips the
    pattern, whose ranges cost milliseconds to compile (as in
    :mod:`skilldeck.skills.routing.tokenize`)."""
    return not text.isascii() and _cjk_re().search(text) is not None


def _has_other_script(text: str) -> bool:
    """Whether a quarter or more of the letters of ``text`` (accent-folded) are past
    the Latin blocks (from Greek, U+0370, on): "Нужна векторная база" is not English
    however few of its words a function-word list knows; "the β of each stock" is."""
    if text.isascii():
        return False
    letters = [c for c in text if c.isalpha()]
    other = sum(c >= "\u0370" for c in letters)
    return other > 0 and 4 * other >= len(letters)


@lru_cache(maxsize=1)
def _cjk_re() -> re.Pattern[str]:
    return re.compile(_CJK_PATTERN)


def looks_foreign(folded_lower: str) -> bool:
    """True when the text has CJK characters, letters of a script other than Latin
    (Cyrillic, Greek, Arabic…: the English embeddings cannot read them), or foreign
    function words."""
    if _has_cjk(folded_lower) or _has_other_script(folded_lower):
        return True
    return any(w in _FOREIGN_MARKERS for w in _WORD_RE.findall(folded_lower))


def translate(folded_lower: str) -> list[str]:
    """English tokens for the known foreign words of a query ([] for English queries).

    ``folded_lower`` is the accent-folded, lower-cased query; words are looked up by
    their raw form (so stemming cannot hide them), phrases and CJK terms as substrings.
    """
    if not looks_foreign(folded_lower):
        return []
    words, phrases = _tables()
    out: list[str] = []
    for raw in _WORD_RE.findall(folded_lower):
        if raw not in STOPWORDS:
            out.extend(_lookup(words, raw))
    for term, targets in phrases:
        if term in folded_lower:
            out.extend(targets)
    return list(dict.fromkeys(out))


class Translator(Protocol):
    """A bilingual dictionary (:class:`.dictionary.BilingualDictionary`): English
    tokens of a request, or None when it has no data installed."""

    def translate(self, folded_lower: str) -> list[str] | None: ...


def tokenize_query(text: str, dictionary: Translator | None = None) -> list[str]:
    """:func:`~skilldeck.skills.routing.tokenize.tokenize` plus English equivalents of
    non-English words: from the ``dictionary`` (packaged dictionary data) when it has
    data, else from this module's small table.

    ``extraer texto de un PDF`` also yields ``extract`` and ``text``; the original
    tokens are kept, so a Spanish skill still matches its own words. English
    requests are returned as tokenised: the dictionary is never opened for them.
    """
    tokens = tokenize(text)
    folded = fold(text).lower()
    if not looks_foreign(folded):
        return tokens
    extra = dictionary.translate(folded) if dictionary is not None else None
    if extra is None:
        extra = translate(folded)
    seen = set(tokens)
    return tokens + [t for t in dict.fromkeys(extra) if t not in seen]


def _lookup(words: dict[str, tuple[str, ...]], raw: str) -> tuple[str, ...]:
    """The word itself; else the word minus a common inflection (facturas → factura);
    else a table word sharing all but the last letter of the word and the last two of
    the table word (revisa ~ revisar, prüfe ~ prüfen); else, for a long compound, a
    table word it starts or ends with (sicherheitslücken → sicherheit)."""
    if raw in words:
        return words[raw]
    for ending in _ENDINGS:
        if len(raw) > len(ending) + 3 and raw.endswith(ending):
            base = raw[: -len(ending)]
            if base in words:
                return words[base]
    if len(raw) >= 5:
        for key in _prefix_groups().get(raw[:4], ()):
            shared = _common_prefix(raw, key)
            if shared >= max(5, len(key) - 2, len(raw) - 1):
                return words[key]
    if len(raw) >= 10:
        for key, targets in words.items():
            if len(key) >= 6 and (raw.startswith(key) or raw.endswith(key)):
                return targets
    return ()


@lru_cache(maxsize=1)
def _prefix_groups() -> dict[str, tuple[str, ...]]:
    """Table words of 5+ letters grouped by their first four letters."""
    words, _ = _tables()
    grouped: dict[str, list[str]] = {}
    for key in words:
        if len(key) >= 5:
            grouped.setdefault(key[:4], []).append(key)
    return {k: tuple(v) for k, v in grouped.items()}


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _joined_lines(table: str) -> list[str]:
    """Table lines, with indented continuation lines appended to the line before."""
    lines: list[str] = []
    for line in table.strip("\n").splitlines():
        if line.startswith(" ") and lines:
            lines[-1] += " " + line.strip()
        elif line.strip():
            lines.append(line.strip())
    return lines
