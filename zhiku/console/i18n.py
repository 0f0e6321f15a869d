"""The console in English and Chinese: English text is the key, :data:`ZH` its translation.

The language is the ``lang`` cookie's (set by the switch on every page), else the browser's
``Accept-Language``, else English.
"""

from __future__ import annotations

from collections.abc import Callable

from flask import request

from zhiku.console.labels_zh import LABELS_ZH

LANGUAGES = ("en", "zh")
LANGUAGE_COOKIE = "lang"

ZH: dict[str, str] = {
    # pages and navigation
    "Console": "控制台",
    "Agent mode": "智能体模式",
    "The chat model searches the knowledge base as often as it needs, each search shown.": (
        "由对话模型按需多次检索知识库，每次检索都会显示。"
    ),
    "Agent mode needs a chat model (llm_base_url).": "智能体模式需要配置对话模型（llm_base_url）。",
    "found": "找到",
    "Datasets": "知识库",
    "Chat": "对话",
    "Documents": "文档",
    "Segments": "分段",
    "Segment": "分段",
    "Hit testing": "召回测试",
    "Settings": "设置",
    "Sign in": "登录",
    "Sign out": "退出",
    "Sign in with": "登录方式",
    "API key": "API 密钥",
    "Console password": "控制台密码",
    "API key or password": "API 密钥或密码",
    "Wrong API key or password.": "API 密钥或密码错误。",
    "Too many failed sign-ins; try again later.": "登录失败次数过多，请稍后再试。",
    "Create a key with `zhiku apikey create`, or set a password with `zhiku console-password`.":
        "用 `zhiku apikey create` 创建密钥，或用 `zhiku console-password` 设置密码。",
    "All datasets": "全部知识库",
    "Scoped key": "限定知识库的密钥",
    "Error": "错误",
    "Something went wrong": "出错了",
    "Back to the datasets": "返回知识库列表",
    "Previous": "上一页",
    "Next": "下一页",
    # datasets
    "Name": "名称",
    "Description": "描述",
    "Status": "状态",
    "Embedding model": "向量模型",
    "Search method": "检索方式",
    "Search": "搜索",
    "Search by name": "按名称搜索",
    "No datasets yet.": "还没有知识库。",
    "New dataset": "新建知识库",
    "Create": "创建",
    # documents
    "Drop files here, or choose them and press Upload": "把文件拖到这里，或选择文件后点上传",
    "at most": "最多",
    "each": "每个",
    "files at once": "个文件一次",
    "Upload": "上传",
    "already indexed as": "内容已索引为",
    "skipped": "已跳过",
    "Skip": "跳过",
    "Replace": "替换",
    "Keep both": "两份都保留",
    "Files to upload": "要上传的文件",
    "Document": "文档",
    "Condition": "条件",
    "field": "字段",
    "operator": "运算符",
    "value": "值",
    "Progress": "进度",
    "Enabled": "已启用",
    "Actions": "操作",
    "Metadata": "元数据",
    "Save": "保存",
    "child chunks": "个子块",
    "Child chunks": "子块",
    "Searches match these; a hit returns the segment above with the children that matched.": (
        "检索匹配这些子块；命中时返回上面的分段及其命中的子块。"
    ),
    "New child chunk": "新子块",
    "Add": "添加",
    "Delete": "删除",
    "No documents yet.": "还没有文档。",
    "archived": "已归档",
    "yes": "是",
    "no": "否",
    "Delete this document?": "删除这个文档？",
    # segments
    "Search the text": "搜索内容",
    "All documents": "全部文档",
    "All": "全部",
    "Disabled": "已停用",
    "Filter": "筛选",
    "No segments match.": "没有匹配的分段。",
    "page": "页",
    "section": "章节",
    "tokens": "词元",
    "hits": "命中",
    "enabled": "已启用",
    "disabled": "已停用",
    "Answer": "答案",
    "Edit": "编辑",
    "Content": "内容",
    "Keywords (comma separated)": "关键词（逗号分隔）",
    "Left as they are, they follow the new text.": "不改动则随新文本重新提取。",
    "Enable": "启用",
    "Disable": "停用",
    # hit testing
    "Query": "查询",
    "Metadata filters": "元数据筛选",
    "Match": "匹配",
    "all conditions": "全部条件",
    "any condition": "任一条件",
    "This dataset has no metadata fields yet (see Settings).": "这个知识库还没有元数据字段（见设置）。",
    "Retrieval settings": "检索设置",
    "Hybrid channels": "混合检索通道",
    "Fusion": "融合方式",
    "Rerank model": "重排模型",
    "Weights": "权重",
    "Score threshold": "分数阈值",
    "Reorder (odd/even)": "重排序（奇偶）",
    "Run": "运行",
    "Run and save settings": "运行并保存设置",
    "Settings saved.": "设置已保存。",
    "Recent queries": "最近的查询",
    "None yet.": "暂无。",
    "Hits": "命中结果",
    "Type a question and run it.": "输入问题并运行。",
    "Relevance: the estimated probability that a passage is relevant (0 to 1), alike for every method.":
        "相关度是段落与问题相关的估计概率，取值 0 到 1，各检索方式含义相同。",
    "Hits below the threshold (%(threshold)s, the line on the bar) are not returned.":
        "低于阈值（%(threshold)s，条形上的竖线）的结果不会返回。",
    "No threshold: every hit is returned.": "未设阈值：所有结果都会返回。",
    "Channel bars are scaled to the best score of their kind among these hits; rank is the channel's own.":
        "各通道条形按本次结果中同类最高分缩放；排名为该通道自身的排名。",
    "Relevance": "相关度",
    "Nothing relevant found: no passage reaches the threshold.": "没有找到相关内容：没有段落达到阈值。",
    "position": "位置",
    "rank": "排名",
    "Nothing found.": "没有找到。",
    # settings
    "Fixed once the dataset is created: its vectors were made by this model.":
        "创建后不可更改：向量由此模型生成。",
    "Indexed.": "已建索引。",
    "Process rule": "处理规则",
    "applies to documents indexed from now on": "对此后索引的文档生效",
    "Cleaners": "清洗规则",
    "Splitter": "分段器",
    "Separator": "分隔符",
    "Overlap (tokens)": "重叠（词元）",
    "Metadata fields": "元数据字段",
    "Type": "类型",
    "Rename": "重命名",
    "Delete this field and every value of it?": "删除这个字段及其所有取值？",
    "Field name": "字段名",
    "Add field": "添加字段",
    "Built-in fields in filters": "在筛选中使用内置字段",
    "Delete this dataset and all its documents?": "删除这个知识库及其全部文档？",
    "Delete dataset": "删除知识库",
    # chat
    "Conversations": "会话",
    "New conversation": "新会话",
    "Searched for": "检索词",
    "none chosen: all": "不选即全部",
    "Question": "问题",
    "Ask": "提问",
    # API access
    "API access": "API 访问",
    "API base URL": "API 基础地址",
    "Send a key as": "请求时这样携带密钥：",
    "OpenAPI document": "OpenAPI 文档",
    "API keys": "API 密钥",
    "Key": "密钥",
    "Scope": "范围",
    "Created": "创建时间",
    "Last used": "最近使用",
    "never": "从未使用",
    "revoked": "已撤销",
    "active": "有效",
    "Revoke": "撤销",
    "Revoke this key? Apps using it stop working at once.": "撤销这个密钥？使用它的应用会立即失效。",
    "New key": "新建密钥",
    "Limit to datasets": "限定知识库",
    "Copy": "复制",
    "Copied": "已复制",
    "Your new key. Copy it now: it will not be shown again.": "这是新密钥。请立即复制：它不会再次显示。",
    "Key revoked.": "密钥已撤销。",
    "No keys yet.": "还没有密钥。",
    "The key you signed in with": "你登录所用的密钥",
    # explanations shown beside values
    "Details": "详情",
    "What the choices mean": "各选项的含义",
    "Recent queries run again with the method they ran with.": "点击最近的查询会按当时的检索方式再次运行。",
    # form errors
    "required": "必填",
    "at most %(count)s characters": "最多 %(count)s 个字符",
    "a whole number": "须为整数",
    "a number": "须为数字",
    "between %(low)s and %(high)s": "须在 %(low)s 到 %(high)s 之间",
    "one of %(choices)s": "须为以下之一：%(choices)s",
    "each one of %(choices)s": "每项须为以下之一：%(choices)s",
    "too many values": "取值过多",
    "name a rerank model for fusion by reranking model": "融合方式为重排模型时须填写重排模型",
    "this operator does not apply to this field": "此运算符不适用于该字段",
    "this operator needs a value": "此运算符需要一个值",
    "this operator takes one value": "此运算符只接受一个值",
    "a date such as 2025-01-31": "须为日期，如 2025-01-31",
    "this name is taken": "这个名称已被使用",
    # document errors
    "Re-indexing failed; the previous version is still served.": "重新索引失败，仍在使用之前的版本。",
    "Some chunks could not be indexed.": "部分文本块未能索引。",
    "Some segments are served without their summary.": "部分分段在没有摘要的情况下提供检索。",
    "This file type is not supported.": "不支持这种文件类型。",
    "The file is empty.": "文件是空的。",
    "The PDF has no text layer (scanned?); it needs OCR first.":
        "这个 PDF 没有文字层（可能是扫描件），需要先做 OCR。",
    "The file is not text (binary content or an unknown encoding).": "文件不是文本（二进制内容或未知编码）。",
    "The file is encrypted.": "文件已加密。",
    "The file is damaged or truncated.": "文件已损坏或不完整。",
    "The file could not be read.": "无法读取文件。",
    "No text was left after extraction and cleaning.": "提取和清洗后没有剩下文本。",
    "Indexing took longer than the time limit per document.": "索引时间超过了单个文档的时间限制。",
    "The uploaded file is gone; upload it again.": "上传的文件已不存在，请重新上传。",
    "The document makes more segments than a document may have.": "文档切分出的分段数超过了上限。",
    "Indexing failed.": "索引失败。",
    # a document's page, batch actions, segments added and deleted
    "Select": "选择",
    "Select all": "全选",
    "{n} selected": "已选 {n} 个",
    "Delete the selected documents?": "删除选中的文档？",
    "Archive": "归档",
    "Unarchive": "取消归档",
    "Words": "字数",
    "Updated": "更新时间",
    "Size": "大小",
    "Source": "来源",
    "Sent through the API or the console": "通过 API 或控制台添加",
    "Added locally (Python or the command line)": "本地添加（Python 或命令行）",
    "No metadata fields yet; add them in the dataset's settings.": "还没有元数据字段，可在知识库设置中添加。",
    "Processing": "处理规则",
    "Index method": "索引方式",
    "Maximum tokens per segment": "分段最大 token 数",
    "Token counting": "token 计数方式",
    "Parents": "父分段",
    "Maximum tokens per child chunk": "子分段最大 token 数",
    "Add a segment": "添加分段",
    "Search and filter them on the Segments page": "在分段页中搜索和筛选",
    "Left empty, they are taken from the text.": "留空则从文本中提取。",
    "characters": "字符",
    "Delete this segment?": "删除这个分段？",
    # the chunk preview
    "Preview chunks": "预览分段",
    "Preview of": "分段预览：",
    "Choose a file first.": "请先选择文件。",
    "Cutting the file into segments…": "正在分段…",
    "Not indexed yet: the segments the dataset's processing rule makes of this file.":
        "尚未索引：按知识库的处理规则，这个文件会分成以下分段。",
    "overlap": "重叠",
    "segments": "个分段",
    "first": "显示前",
    "shown": "个",
    # hit testing of a parent-child dataset: the children each hit was found by
    "Matched child chunks": "命中的子块",
    "each with its own relevance, best first": "各自的相关度，最相关的在前",
    # files refused at upload, the reason shown beside the file
    "empty file": "文件为空",
    "no reader for this kind of file": "不支持这种文件类型",
    "binary content under a text file's name": "文件名是文本文件，内容却是二进制",
    "neither its name nor its content is a known format": "文件名和内容都不是支持的格式",
    "unsupported file type": "不支持的文件类型",
}
ZH.update(LABELS_ZH)


def choose_language() -> str:
    chosen = request.cookies.get(LANGUAGE_COOKIE)
    if chosen in LANGUAGES:
        return chosen
    best = request.accept_languages.best_match(["en", "zh", "zh-CN", "zh-TW", "zh-Hans", "zh-Hant"])
    return "zh" if best and best.startswith("zh") else "en"


def translator(lang: str) -> Callable[[str], str]:
    """``_(text)`` for templates: the text in ``lang`` (English when a translation is missing)."""
    if lang == "zh":
        return lambda text: ZH.get(text, text)
    return lambda text: text
