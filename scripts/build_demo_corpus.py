"""Regenerate the binary files of the demo corpus: ``policies.pdf`` and ``history.docx``.

The Markdown, HTML and CSV files of the corpus are written by hand; the PDF and DOCX are built
here from the text below, so their content can be reviewed and changed as text. Both outputs are
byte-for-byte reproducible: the PDF is written in reportlab's invariant mode and the DOCX with
fixed document properties and fixed zip timestamps.

Usage: ``python scripts/build_demo_corpus.py [--out DIR]`` (default: ``zhiku/demo/corpus``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import zipfile
from pathlib import Path

from docx import Document as DocxDocument
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.cidfonts import UnicodeCIDFont
from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate, Spacer

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "zhiku" / "demo" / "corpus"

CJK_FONT = "STSong-Light"  # a standard CID font: PDF readers supply it, nothing is embedded
FIXED_TIME = dt.datetime(2024, 3, 1, 9, 0, 0)

# --- policies.pdf: (kind, text) blocks; kind is "title", "h", "zh", "en" or "page" ----------

POLICIES: list[tuple[str, str]] = [
    ("title", "青山茶业服务政策 Qingshan Tea Service Policies"),
    ("zh", "生效日期：2024年3月1日。本政策适用于青山茶业网店和全部门店。"),
    ("en", "Effective 1 March 2024. These policies apply to the Qingshan Tea online shop and all stores."),
    ("h", "一、退货与换货 / 1. Returns and exchanges"),
    ("zh", "自签收之日起14天内，未开封、包装完好的茶叶可以无理由退货。"),
    (
        "zh",
        "已开封的茶叶只有在出现质量问题（受潮、发霉、有异味或混入杂物）时才可以退换。请在发现问题后拍照并联系客服。",
    ),
    ("zh", "因质量问题产生的退货运费由青山茶业承担；非质量问题的退货运费由顾客承担。"),
    (
        "zh",
        "我们在收到退货并检查无误后5个工作日内，将款项原路退回。定制礼盒、试饮装和特价清仓商品不支持无理由退货。",
    ),
    (
        "en",
        "Unopened tea in its original packaging may be returned for any reason within 14 days of delivery. "
        "Opened tea can be returned or exchanged only if it has a quality problem, such as dampness, "
        "mould, an off smell or foreign matter.",
    ),
    (
        "en",
        "We pay the return postage for quality problems; otherwise the customer pays it. Refunds go back "
        "to the original payment method within 5 business days after the returned item has been received "
        "and checked. Custom gift boxes, sample packs and clearance items cannot be returned unless they "
        "have a quality problem.",
    ),
    ("page", ""),
    ("h", "二、茶具破损与保修 / 2. Breakage and warranty"),
    (
        "zh",
        "瓷器和玻璃茶具在运输中破损的，请在签收后48小时内把外包装和破损商品的照片发送给客服，我们将免费补发同款商品，无需寄回破损件。",
    ),
    ("zh", "智能温控壶QS-K3自购买之日起保修两年。摔落等人为损坏以及底座进水不在保修范围内。"),
    (
        "en",
        "If porcelain or glass teaware arrives damaged, send photos of the outer box and the broken item "
        "to customer service within 48 hours of delivery. We will ship a free replacement, and you do "
        "not need to send the broken piece back.",
    ),
    (
        "en",
        "The QS-K3 smart kettle has a two-year warranty from the date of purchase. Damage from drops "
        "or from water getting into the base is not covered.",
    ),
    ("h", "三、隐私 / 3. Privacy"),
    (
        "zh",
        "我们只收集完成订单所需的信息：姓名、收货地址、电话和电子邮箱。订单记录保存3年后删除。我们不会出售或出租您的个人信息。",
    ),
    ("zh", "如需查询或删除您的数据，请发送邮件至privacy@qingshantea.example，我们会在15个工作日内处理。"),
    (
        "en",
        "We collect only what is needed to fulfil an order: name, delivery address, phone number and "
        "email. Order records are deleted after 3 years. We never sell or rent your personal data. "
        "To see or delete your data, write to privacy@qingshantea.example; we answer within 15 "
        "business days.",
    ),
    ("page", ""),
    ("h", "四、批发与企业采购 / 4. Wholesale and business orders"),
    (
        "zh",
        "茶馆、餐厅和企业客户单次采购满5公斤可以申请批发价，满20公斤在批发价基础上再享八折。经审核的长期客户可以月结，账期30天。",
    ),
    ("zh", "批发样品每种最多50克，样品费可以在首次批发订单中抵扣。"),
    (
        "en",
        "Tea houses, restaurants and businesses qualify for wholesale prices on orders of 5 kg or more, "
        "with a further 20% off wholesale prices from 20 kg. Approved regular customers can pay monthly "
        "on 30-day terms. Samples are limited to 50 g per tea, and the sample fee is credited against "
        "the first wholesale order.",
    ),
    ("zh", "客服热线：400-820-6688　电子邮箱：service@qingshantea.example"),
]

# --- history.docx ------------------------------------------------------------------------------

HISTORY_TITLE = "The Story of Qingshan Tea (青山茶业)"

HISTORY_SECTIONS: list[tuple[str, list[str]]] = [
    (
        "A tea stall by West Lake",
        [
            "Qingshan Tea was founded in 1987, when Lin Shuhua, the daughter of a tea farmer from Anxi in "
            "Fujian province, opened a tea stall of six square metres near West Lake in Hangzhou. She sold "
            "Tieguanyin from her family's garden and Longjing bought directly from the villages around the "
            "lake, and she wrote the picking date on every bag by hand, a habit the company keeps today.",
            "In 1995 the stall moved into a real shop at 88 Longjing Road, which is still the flagship "
            "store. Regular customers came for the tea and stayed for the tastings that Lin Shuhua held "
            "every Saturday afternoon.",
        ],
    ),
    (
        "Growing up",
        [
            "In 2003 her son Lin Hao joined the business after studying food science in Shanghai. He set up "
            "the company's tasting laboratory, where every lot is cupped and tested for pesticide residues "
            "before it is bought. Lots that fail are returned to the garden with the test report.",
            "The online shop opened in 2012, and a second store followed in 2016 on Nanjing West Road in "
            "Shanghai's Jing'an district. In 2019 Qingshan Tea launched its own temperature-controlled "
            "kettle, the QS-K3, designed with an appliance maker in Ningbo.",
        ],
    ),
    (
        "Partner gardens",
        [
            "Today Qingshan Tea works with 23 family-run gardens in Zhejiang, Fujian, Anhui and Yunnan. "
            "Prices are agreed with each garden before the harvest, so a poor season does not fall on the "
            "farmers alone. Since 2021 all teas are packed in compostable paper tins instead of "
            "plastic-lined bags.",
        ],
    ),
    (
        "Our name",
        [
            "Qingshan (青山) means \u201cgreen mountains\u201d. The name comes from a saying that Lin "
            "Shuhua's father liked to quote: 青山不老，茶香长存, \u201cthe green mountains never grow "
            "old, and the fragrance of tea lives on\u201d.",
        ],
    ),
]

HISTORY_TIMELINE: list[tuple[str, str]] = [
    ("1987", "Tea stall opens near West Lake, Hangzhou"),
    ("1995", "Flagship store at 88 Longjing Road"),
    ("2003", "Tasting laboratory set up by Lin Hao"),
    ("2012", "Online shop opens"),
    ("2016", "Shanghai Jing'an store opens"),
    ("2019", "QS-K3 smart kettle launched"),
    ("2021", "Compostable paper tins replace plastic-lined bags"),
]


def build_pdf(path: Path) -> None:
    """Write the bilingual policies PDF (three A4 pages) to ``path``.

    Chinese runs use the non-embedded ``STSong-Light`` CID font, so text extractors map the
    glyphs back to Unicode through its standard CMap.
    """
    pdfmetrics.registerFont(UnicodeCIDFont(CJK_FONT))
    styles = {
        "title": ParagraphStyle("title", fontName=CJK_FONT, fontSize=18, leading=24, spaceAfter=10),
        "h": ParagraphStyle("h", fontName=CJK_FONT, fontSize=13, leading=18, spaceBefore=10, spaceAfter=6),
        "zh": ParagraphStyle(
            "zh", fontName=CJK_FONT, fontSize=10.5, leading=16, spaceAfter=5, wordWrap="CJK"
        ),
        "en": ParagraphStyle("en", fontName="Helvetica", fontSize=10.5, leading=15, spaceAfter=5),
    }
    doc = SimpleDocTemplate(
        str(path),
        pagesize=A4,
        leftMargin=20 * mm,
        rightMargin=20 * mm,
        topMargin=20 * mm,
        bottomMargin=20 * mm,
        title="Qingshan Tea Service Policies",
        author="Qingshan Tea",
        creator="build_demo_corpus.py",
        invariant=1,
    )
    story: list[object] = []
    for kind, text in POLICIES:
        if kind == "page":
            story.append(PageBreak())
        else:
            story.append(Paragraph(text, styles[kind]))
    story.append(Spacer(1, 6 * mm))
    doc.build(story)


def build_docx(path: Path) -> None:
    """Write the company-history DOCX (headings, paragraphs, one table) to ``path``."""
    doc = DocxDocument()
    props = doc.core_properties
    props.title, props.author = "The Story of Qingshan Tea", "Qingshan Tea"
    props.created = props.modified = FIXED_TIME
    props.last_modified_by, props.revision = "Qingshan Tea", 1

    doc.add_heading(HISTORY_TITLE, level=1)
    for heading, paragraphs in HISTORY_SECTIONS:
        doc.add_heading(heading, level=2)
        for text in paragraphs:
            doc.add_paragraph(text)
    doc.add_heading("Milestones", level=2)
    table = doc.add_table(rows=1, cols=2)
    table.style = "Table Grid"
    table.rows[0].cells[0].text, table.rows[0].cells[1].text = "Year", "Milestone"
    for year, event in HISTORY_TIMELINE:
        cells = table.add_row().cells
        cells[0].text, cells[1].text = year, event

    buffer = io.BytesIO()
    doc.save(buffer)
    path.write_bytes(_with_fixed_zip_times(buffer.getvalue()))


def _with_fixed_zip_times(data: bytes) -> bytes:
    """Rewrite a zip archive with every member dated ``FIXED_TIME``, so rebuilds are identical."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=FIXED_TIME.timetuple()[:6])
            fixed.compress_type = zipfile.ZIP_DEFLATED
            dst.writestr(fixed, src.read(info.filename))
    return out.getvalue()


def main(argv: list[str] | None = None) -> None:
    """Build both files into ``--out`` (created if missing) and print their paths."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder")
    out: Path = parser.parse_args(argv).out
    out.mkdir(parents=True, exist_ok=True)
    build_pdf(out / "policies.pdf")
    build_docx(out / "history.docx")
    for name in ("policies.pdf", "history.docx"):
        print(out / name)


if __name__ == "__main__":
    main()
