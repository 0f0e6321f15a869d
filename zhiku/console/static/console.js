// zhiku console: confirmations, copy buttons, uploads with live progress, and the chat stream. No library.
"use strict";

const csrfToken = () => document.querySelector('meta[name="csrf-token"]').content;

function confirmForms() {
  // one listener for every form (or submit button) asking to be confirmed, in rows added later too
  document.addEventListener("submit", (event) => {
    const asking = event.submitter?.dataset.confirm ? event.submitter : event.target.closest("form[data-confirm]");
    if (asking && !window.confirm(asking.dataset.confirm)) event.preventDefault();
  });
}

function batchSelection() {
  // the documents ticked for a batch action: a select-all box and a count, kept right as rows
  // come and go (a row's box is never re-rendered while the list updates, so ticks stay)
  const all = document.getElementById("select-all");
  const count = document.getElementById("batch-count");
  if (!all || !count) return;
  const boxes = () => Array.from(document.querySelectorAll("#document-rows input.pick"));
  const show = () => {
    const ticked = boxes().filter((box) => box.checked).length;
    count.textContent = count.dataset.template.replace("{n}", String(ticked));
    all.checked = ticked > 0 && ticked === boxes().length;
    all.indeterminate = ticked > 0 && ticked < boxes().length;
  };
  all.addEventListener("change", () => {
    boxes().forEach((box) => { box.checked = all.checked; });
    show();
  });
  document.getElementById("document-rows").addEventListener("change", show);
  document.getElementById("batch-form").addEventListener("submit", (event) => {
    if (!boxes().some((box) => box.checked)) event.preventDefault();
  });
  show();
}

// -- documents: upload and progress ---------------------------------------------------------

const POLL_MS = 1000;
const POLL_LIMIT_MS = 30 * 60 * 1000; // a page stops polling after half an hour
let polling = null;
// each row's cells as the server last sent them, to change only what changed since
const sentCells = new WeakMap();

function rowKey(row) {
  return row.dataset.document || "";
}

// a cell as sent, less its forms' CSRF tokens (each rendering signs a new one)
const sentHtml = (cell) => cell.innerHTML.replace(/name="csrf_token" value="[^"]*"/g, "");

function rememberCells(row) {
  sentCells.set(row, Array.from(row.cells).map(sentHtml));
}

function updateRow(row, fresh) {
  // a cell is replaced only when the server's version of it changed: what the user has open,
  // typed or focused in the others stays as it is
  const before = sentCells.get(row) || [];
  Array.from(fresh.cells).forEach((cell, index) => {
    if (before[index] === sentHtml(cell)) return;
    const copy = cell.cloneNode(true);
    localDates(copy);
    if (row.cells[index]) row.cells[index].replaceWith(copy);
    else row.append(copy);
  });
  for (const name of ["class", "data-status"]) row.setAttribute(name, fresh.getAttribute(name) || "");
  sentCells.set(row, Array.from(fresh.cells).map(sentHtml));
}

function announce(text) {
  const region = document.getElementById("rows-announcer");
  if (region && text) region.textContent = text;
}

async function refreshRows(form) {
  const response = await fetch(form.dataset.rows, { headers: { Accept: "text/html" } });
  if (!response.ok) return false;
  const template = document.createElement("template");
  template.innerHTML = await response.text(); // rendered and escaped by the server's template
  const body = document.getElementById("document-rows");
  const current = new Map(Array.from(body.rows).map((row) => [rowKey(row), row]));
  const changes = [];
  let previous = null;
  for (const fresh of Array.from(template.content.querySelectorAll("tr"))) {
    let row = current.get(rowKey(fresh));
    current.delete(rowKey(fresh));
    if (!row) {
      row = fresh;
      rememberCells(row);
      localDates(row);
      if (previous) previous.after(row);
      else body.prepend(row);
    } else {
      if (row.dataset.status !== fresh.dataset.status) {
        const name = fresh.querySelector(".doc-name");
        const status = fresh.querySelector(".badge.status");
        if (name && status) changes.push(name.textContent.trim() + ": " + status.textContent.trim());
      }
      updateRow(row, fresh);
      if (previous ? previous.nextElementSibling !== row : body.firstElementChild !== row) {
        if (previous) previous.after(row);
        else body.prepend(row);
      }
    }
    previous = row;
  }
  current.forEach((row) => row.remove());
  announce(changes.join(" · "));
  const total = document.getElementById("document-total");
  const sent = response.headers.get("X-Zhiku-Total");
  if (total && sent !== null && total.textContent !== sent) total.textContent = sent;
  body.dispatchEvent(new Event("change")); // rows gone or added: the selection's count again
  return response.headers.get("X-Zhiku-Active") === "1";
}

let quietRounds = 0;

function pollRows(form) {
  // a call while polling counts as news: at least two more rounds, so a document queued while a
  // round was on its way is seen (that round may come back quiet)
  quietRounds = 0;
  if (polling) return;
  const started = Date.now();
  polling = setInterval(async () => {
    const active = await refreshRows(form);
    quietRounds = active ? 0 : quietRounds + 1;
    if (quietRounds >= 2 || Date.now() - started > POLL_LIMIT_MS) {
      clearInterval(polling);
      polling = null;
    }
  }, POLL_MS);
}

async function sendFile(form, file, onDuplicate) {
  // one file to the upload view; the answer's record of it, or an Error with the server's message
  const data = new FormData();
  data.append("file", file, file.name);
  data.append("csrf_token", csrfToken());
  data.append("on_duplicate", onDuplicate);
  const response = await fetch(form.action, {
    method: "POST",
    body: data,
    headers: { Accept: "application/json", "X-CSRFToken": csrfToken() },
  });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(body.message || response.statusText);
  return body.documents[0];
}

function duplicateChoice(form, item, file, record) {
  // "already indexed as …": skip (already done), replace that document, or keep both
  const words = form.dataset;
  item.textContent = file.name + ": " + words.already + " “" + record.existing_name + "” ";
  const choices = [["skip", words.skip], ["replace", words.replace], ["keep", words.keep]];
  for (const [choice, label] of choices) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "small secondary";
    button.dataset.choice = choice;
    button.textContent = label;
    button.addEventListener("click", async () => {
      if (choice === "skip") {
        item.textContent = file.name + ": " + words.skipped + " (" + words.already + " “" + record.existing_name + "”)";
        return;
      }
      item.textContent = file.name + ": …";
      await uploadOne(form, item, file, choice);
      await refreshRows(form);
      pollRows(form);
    });
    item.append(button);
  }
}

async function uploadOne(form, item, file, onDuplicate) {
  item.textContent = file.name + ": …";
  try {
    const record = await sendFile(form, file, onDuplicate);
    if (record.duplicate === "skipped") duplicateChoice(form, item, file, record);
    else item.textContent = file.name + ": ✓";
  } catch (error) {
    item.textContent = file.name + ": " + error.message;
  }
}

async function uploadFiles(form, files) {
  const status = document.getElementById("upload-status");
  status.textContent = "";
  for (const file of files) {
    const item = document.createElement("li");
    status.append(item);
    await uploadOne(form, item, file, "skip");
  }
  await refreshRows(form);
  pollRows(form);
}

function uploads() {
  const form = document.getElementById("upload-form");
  if (!form) return;
  const input = document.getElementById("file-input");
  const button = document.getElementById("upload");
  let busy = false;
  // one trigger: the Upload button (or a drop) sends the files; while they go, nothing else does
  const send = (files) => {
    if (busy || !files.length) return;
    busy = true;
    // a disabled button drops the focus: a keyboard user who pressed it gets it back after
    const pressed = document.activeElement === button;
    button.disabled = true;
    uploadFiles(form, files).finally(() => {
      input.value = "";
      button.disabled = false;
      busy = false;
      if (pressed && document.activeElement === document.body) button.focus();
    });
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    send(Array.from(input.files));
  });
  ["dragenter", "dragover"].forEach((name) => form.addEventListener(name, (event) => {
    event.preventDefault();
    form.classList.add("over");
  }));
  ["dragleave", "drop"].forEach((name) => form.addEventListener(name, () => form.classList.remove("over")));
  form.addEventListener("drop", (event) => {
    event.preventDefault();
    if (event.dataTransfer) send(Array.from(event.dataTransfer.files));
  });
  const rows = document.getElementById("document-rows");
  Array.from(rows.rows).forEach(rememberCells);
  if (rows.dataset.active === "1") pollRows(form);
}

function chunkPreview() {
  // "Preview chunks": the first chosen file as the segments indexing it would make, not indexed
  const button = document.getElementById("preview-chunks");
  if (!button) return;
  const input = document.getElementById("file-input");
  const status = document.getElementById("preview-status");
  const shown = document.getElementById("preview");
  button.addEventListener("click", async () => {
    const file = input.files[0];
    if (!file) {
      status.textContent = button.dataset.none;
      return;
    }
    status.textContent = button.dataset.working;
    button.disabled = true;
    try {
      const data = new FormData();
      data.append("file", file, file.name);
      const response = await fetch(button.dataset.url, {
        method: "POST",
        body: data,
        headers: { Accept: "application/json", "X-CSRFToken": csrfToken() },
      });
      if (!response.ok) {
        const body = await response.json().catch(() => ({}));
        status.textContent = file.name + ": " + (body.message || response.statusText);
        return;
      }
      const template = document.createElement("template");
      template.innerHTML = await response.text(); // rendered and escaped by the server's template
      shown.replaceChildren(template.content);
      shown.hidden = false;
      status.textContent = shown.querySelector("h2").textContent;
    } finally {
      button.disabled = false;
    }
  });
}

// -- chat: a streamed answer with clickable citations ----------------------------------------

function citedText(container, text, sources, segmentUrl) {
  // [n] markers become links to the cited segment; everything else stays text
  container.textContent = "";
  const byNumber = new Map(sources.map((s) => [String(s.position), s]));
  let last = 0;
  for (const match of text.matchAll(/\[(\d+)\]/g)) {
    container.append(document.createTextNode(text.slice(last, match.index)));
    const source = byNumber.get(match[1]);
    if (source) {
      const link = document.createElement("a");
      link.href = segmentUrl.replace("DATASET", source.dataset_id).replace("SEGMENT", source.segment_id);
      link.className = "citation";
      link.textContent = match[0];
      link.title = source.document_name || "";
      container.append(link);
    } else {
      container.append(document.createTextNode(match[0]));
    }
    last = match.index + match[0].length;
  }
  container.append(document.createTextNode(text.slice(last)));
}

function showEnd(view, event, text, segmentUrl, searchedLabel) {
  const meta = event.metadata || {};
  const sources = meta.retriever_resources || [];
  citedText(view.querySelector(".text"), text, sources, segmentUrl);
  const plan = meta.plan || {};
  const searched = view.querySelector(".searched");
  if (plan.search_query && plan.search_query !== plan.question) {
    searched.textContent = searchedLabel + ": " + plan.search_query;
  } else {
    searched.remove(); // as a reopened conversation shows it: only a query that differs
  }
  const list = view.querySelector(".sources");
  for (const source of sources) {
    const item = document.createElement("li");
    item.value = source.position;
    const link = document.createElement("a");
    link.href = segmentUrl.replace("DATASET", source.dataset_id).replace("SEGMENT", source.segment_id);
    link.textContent = (source.document_name || "") + (source.page != null ? " · p." + source.page : "");
    item.append(link);
    list.append(item);
  }
}

function showStep(view, event, searchedLabel, foundLabel) {
  // one search of agent mode, shown as it happens: what was searched, what it found
  let query = "";
  try {
    query = JSON.parse(event.tool_input || "{}").query || "";
  } catch (error) {
    query = event.tool_input || "";
  }
  const item = document.createElement("li");
  item.className = "step";
  item.textContent = searchedLabel + ": " + query + " — " + foundLabel + " " + (event.observation || "");
  view.querySelector(".steps").append(item);
}

function listConversation(id, question) {
  // a conversation the list does not show yet (the first answer made it) goes on top, marked on
  const list = document.getElementById("conversations");
  if (!list || !id) return;
  const href = list.dataset.url + "?conversation=" + encodeURIComponent(id);
  if (list.querySelector(`a[href="${CSS.escape(href)}"]`)) return;
  list.querySelectorAll("li").forEach((item) => {
    item.classList.remove("on");
    if (!item.querySelector("a")) item.remove(); // "None yet."
  });
  const item = document.createElement("li");
  item.className = "on";
  const link = document.createElement("a");
  link.href = href;
  link.textContent = question.length > 40 ? question.slice(0, 40) + "…" : question;
  item.append(link);
  list.prepend(item);
}

async function ask(form) {
  const messages = document.getElementById("messages");
  const question = document.createElement("div");
  question.className = "message user";
  const asked = document.createElement("div");
  asked.className = "text";
  asked.textContent = form.querySelector("textarea").value;
  question.append(asked);
  messages.append(question);
  const view = document.getElementById("answer-template").content.firstElementChild.cloneNode(true);
  messages.append(view);
  const response = await fetch(form.action, {
    method: "POST",
    body: new FormData(form),
    headers: { Accept: "text/event-stream", "X-CSRFToken": csrfToken() },
  });
  if (!response.ok) {
    const body = await response.json().catch(() => ({}));
    view.querySelector(".text").textContent = body.message || response.statusText;
    view.classList.add("error");
    return;
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let text = "";
  const segmentUrl = form.dataset.segmentUrl;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const chunk = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      if (!chunk.startsWith("data: ")) continue;
      const event = JSON.parse(chunk.slice(6));
      if (event.event === "message") {
        text += event.answer;
        view.querySelector(".text").textContent = text;
      } else if (event.event === "message_replace") {
        text = event.answer;
        view.querySelector(".text").textContent = text;
      } else if (event.event === "agent_thought") {
        showStep(view, event, form.dataset.searched, form.dataset.found);
      } else if (event.event === "message_end") {
        document.getElementById("conversation_id").value = event.conversation_id || "";
        listConversation(event.conversation_id, asked.textContent);
        showEnd(view, event, text, segmentUrl, form.dataset.searched);
      } else if (event.event === "error") {
        view.querySelector(".text").textContent = event.message;
        view.classList.add("error");
      }
    }
  }
}

function chat() {
  const form = document.getElementById("chat-form");
  if (!form) return;
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    ask(form).finally(() => {
      button.disabled = false;
      form.querySelector("textarea").value = "";
    });
  });
}

function localDates(root = document) {
  // a date (YYYY-MM-DD) or a moment (ISO 8601) written in the page's language
  const lang = document.documentElement.lang || undefined;
  root.querySelectorAll("time[datetime]").forEach((element) => {
    const value = element.getAttribute("datetime");
    const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(value);
    const moment = new Date(dateOnly ? value + "T00:00:00Z" : value);
    if (Number.isNaN(moment.getTime())) return;
    element.textContent = dateOnly
      ? moment.toLocaleDateString(lang, { timeZone: "UTC" })
      : moment.toLocaleString(lang);
  });
}

function modeFields() {
  // fields that apply to one index mode only (a parent-child index's) shown when it is chosen
  const select = document.querySelector("select[name='doc_form']");
  const parts = document.querySelectorAll("[data-doc-form]");
  if (!select || !parts.length) return;
  const show = () => parts.forEach((part) => { part.hidden = part.dataset.docForm !== select.value; });
  select.addEventListener("change", show);
  show();
}

function copyButtons() {
  // a button copying the text of the element it names (a new key's secret, the API's address)
  document.querySelectorAll("button[data-copy]").forEach((button) => {
    button.addEventListener("click", async () => {
      const source = document.querySelector(button.dataset.copy);
      if (!source) return;
      const text = source.textContent.trim();
      try {
        await navigator.clipboard.writeText(text);
      } catch (error) {
        // no clipboard permission: the text is selected for the user to copy
        const range = document.createRange();
        range.selectNodeContents(source);
        const selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        return;
      }
      button.textContent = button.dataset.copied;
    });
  });
}

document.addEventListener("DOMContentLoaded", () => {
  confirmForms();
  copyButtons();
  batchSelection();
  modeFields();
  chunkPreview();
  uploads(); // first: it keeps the rows as the server sent them, before dates are localised
  localDates();
  chat();
});
