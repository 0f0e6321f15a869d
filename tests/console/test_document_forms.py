"""The console's document forms refuse bad input with 4xx JSON naming the field: a batch action
without documents or with an unknown action, another dataset's document, an empty segment, a
preview without a file; and a document's page is its dataset's alone."""

from __future__ import annotations

import re
from io import BytesIO

from tests.console.conftest import Console

JSON = {"Accept": "application/json"}


def test_bad_document_forms_answer_4xx_naming_the_field(console: Console) -> None:
    dataset = console.create_dataset("forms")
    other = console.create_dataset("another")
    document = console.add_text(dataset, "green.txt", "Longjing green tea is pan-fired by hand.")
    foreign = console.add_text(other, "black.txt", "Keemun black tea is fully oxidised.")
    console.wait_indexed(dataset)
    console.wait_indexed(other)
    batch = f"/datasets/{dataset}/documents/batch"
    cases = {
        "document_ids": {"action": "disable"},
        "action": {"action": "burn", "document_ids": document},
    }
    for field, form in cases.items():
        response = console.post(batch, form, headers=JSON)
        assert response.status_code == 400 and response.json["message"].startswith(field), response.json  # type: ignore[index]
    assert console.post(batch, {"action": "delete", "document_ids": foreign}, headers=JSON).status_code == 404
    assert console.get(f"/datasets/{dataset}/documents/{foreign}", headers=JSON).status_code == 404
    empty = console.post(
        f"/datasets/{dataset}/documents/{document}/segments", {"content": "  "}, headers=JSON
    )
    assert empty.status_code == 400 and empty.json["message"].startswith("content")  # type: ignore[index]
    none = console.post(f"/datasets/{dataset}/preview", {}, headers=JSON)
    assert none.status_code == 400 and none.json["message"].startswith("file")  # type: ignore[index]
    assert console.post(f"/datasets/{dataset}/segments/nope/delete", {}, headers=JSON).status_code == 404
    page = console.get(f"/datasets/{dataset}/documents/{document}").get_data(as_text=True)
    assert "green.txt" in page and 'id="rule-splitter">recursive<' in page
    # the other dataset's document was left alone by the refused batch
    assert console.get(f"/datasets/{other}/documents/{foreign}").status_code == 200
    upload = console.post(
        f"/datasets/{dataset}/upload", {"file": (BytesIO(b"text"), "notes.xyz")}, headers=JSON
    )
    assert upload.status_code == 415 and upload.json["message"] == "no reader for this kind of file"  # type: ignore[index]


def test_a_value_refused_on_a_documents_page_is_shown_there_as_typed(console: Console) -> None:
    dataset = console.create_dataset("values")
    added = console.post(f"/datasets/{dataset}/fields", {"action": "add", "name": "year", "type": "number"})
    assert added.status_code == 302
    document = console.add_text(dataset, "green.txt", "Longjing green tea is pan-fired by hand.")
    console.wait_indexed(dataset)
    page = console.get(f"/datasets/{dataset}/documents/{document}").get_data(as_text=True)
    (field,) = re.findall(r'name="(meta_[^"]+)"', page)
    here = f"/datasets/{dataset}/documents/{document}"
    refused = console.post(f"{here}/metadata", {field: "two thousand", "next": here})
    html = refused.get_data(as_text=True)
    assert refused.status_code == 400 and 'id="document-info"' in html  # the document's own page
    assert 'value="two thousand"' in html and 'aria-invalid="true"' in html and "year: a number" in html
    saved = console.post(f"{here}/metadata", {field: "2025", "next": here})
    assert saved.status_code == 302 and saved.headers["Location"].endswith(here)
    assert 'value="2025"' in console.get(here).get_data(as_text=True)
