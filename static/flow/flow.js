/* The flow page: each section fetches its figure from /api/v1/workflows/<id>/flow/...,
   draws it with uPlot, writes a text summary and a table, and links its CSV. Every series
   has a label, a dash pattern or a hatch, so no chart depends on colour alone. The board's
   WebSocket says when something changed: the figures are refetched, at most once every
   REFRESH_MS however fast the board changes (each refetch is seven requests to the server). */
import uPlot from "../vendor/uplot/uPlot.esm.js";
import { coalesced } from "./coalesce.js";

const root = document.getElementById("flow");
const workflowId = root.dataset.workflowId;
const form = root.querySelector('[data-role="window"]');
const alertBox = document.getElementById("flow-alert");
const live = root.querySelector('[data-role="live"]');
const COLORS = ["#3b5bdb", "#e8590c", "#2b8a3e", "#862e9c", "#c92a2a", "#1098ad", "#5c940d", "#d6336c"];
const DASHES = [[], [6, 3], [2, 3], [8, 3, 2, 3], [1, 2], [10, 4]];
const DAY = 86400;
const REFRESH_MS = 5000;
const plots = {};

function isoDate(d) { return d.toISOString().slice(0, 10); }

function setDays(days) {
  const to = new Date();
  const from = new Date(to.getTime() - days * DAY * 1000);
  form.elements.from.value = isoDate(from);
  form.elements.to.value = isoDate(to);
}

function query(extra) {
  const from = new Date(form.elements.from.value + "T00:00:00Z");
  const to = new Date(form.elements.to.value + "T00:00:00Z");
  to.setUTCDate(to.getUTCDate() + 1);  // the "to" day is included
  // A window up to today ends "now": sent without `to`, so the server's answer kept for the
  // board's version (for the minute) is shared by every chart and viewer who asks again.
  const params = new URLSearchParams({ from: from.toISOString() });
  if (to <= new Date()) params.set("to", to.toISOString());
  Object.entries(extra || {}).forEach(([k, v]) => params.set(k, v));
  return params;
}

/* The chosen lane, for the charts that split by lane (the select is there on boards with
   more than one lane). */
function byLane(extra) {
  const lane = form.elements.lane;
  return Object.assign({}, extra, lane && lane.value ? { lane: lane.value } : {});
}

function endpoint(name, extra) {
  return "/api/v1/workflows/" + workflowId + "/flow/" + name + "/?" + query(extra);
}

async function getJSON(url) {
  const response = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    const errors = data.errors ? Object.entries(data.errors).map(([f, m]) => f + ": " + [].concat(m).join(" ")).join("; ") : "";
    throw new Error(data.detail ? data.detail + (errors ? " " + errors : "") : "HTTP " + response.status);
  }
  return data;
}

function section(id) { return root.querySelector('[data-chart="' + id + '"]'); }

function hours(seconds) { return seconds == null ? "" : (seconds / 3600).toFixed(1); }

function when(iso) { return iso ? new Date(iso).toISOString().slice(0, 16).replace("T", " ") : "—"; }

function fillTable(sec, head, rows) {
  const table = sec.querySelector('[data-role="table"]');
  const tr = (cells, tag) => "<tr>" + cells.map((c) => "<" + tag + ">" + escapeHtml(String(c)) + "</" + tag + ">").join("") + "</tr>";
  table.tHead.innerHTML = tr(head, "th");
  table.tBodies[0].innerHTML = rows.length ? rows.map((r) => tr(r, "td")).join("") : tr(["No data in this window."], "td");
}

function escapeHtml(text) {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

function summarize(sec, text) {
  sec.querySelector('[data-role="summary"]').textContent = text;
  const plot = sec.querySelector('[data-role="plot"]');
  if (plot) plot.setAttribute("aria-label", text);
}

function csvLink(sec, name, extra) {
  sec.querySelector('[data-role="csv"]').href = endpoint(name, Object.assign({ format: "csv" }, extra));
}

/* A hatch per series index: the bands differ by pattern as well as by colour. */
function hatch(u, index, color) {
  const c = document.createElement("canvas");
  c.width = c.height = 8;
  const g = c.getContext("2d");
  g.fillStyle = color + "55";
  g.fillRect(0, 0, 8, 8);
  g.strokeStyle = color;
  g.lineWidth = 1;
  const kind = index % 4;
  g.beginPath();
  if (kind === 0) { g.moveTo(0, 8); g.lineTo(8, 0); }
  else if (kind === 1) { g.moveTo(0, 0); g.lineTo(8, 8); }
  else if (kind === 2) { g.moveTo(0, 4); g.lineTo(8, 4); }
  else { g.arc(4, 4, 1.2, 0, 2 * Math.PI); }
  g.stroke();
  return u.ctx.createPattern(c, "repeat");
}

function draw(id, opts, data) {
  const sec = section(id);
  const target = sec.querySelector('[data-role="plot"]');
  if (plots[id]) plots[id].destroy();
  opts.width = Math.max(320, target.clientWidth || 800);
  opts.height = opts.height || 280;
  plots[id] = new uPlot(opts, data, target);
}

async function cfd() {
  const sec = section("cfd");
  const data = await getJSON(endpoint("cfd", byLane({ interval: "day" })));
  csvLink(sec, "cfd", byLane({ interval: "day" }));
  const xs = data.points.map((p) => Date.parse(p.at) / 1000);
  const steps = data.steps;
  // Each line fills down to zero; the first step's line is the highest, so drawn first,
  // every later (lower) one over it shows the band between two lines.
  const series = [{}];
  const columns = [xs];
  steps.forEach((step, index) => {
    const color = COLORS[index % COLORS.length];
    columns.push(data.points.map((p) => p.arrived[step.id]));
    series.push({ label: step.name, stroke: color, width: 1.5, dash: DASHES[index % DASHES.length],
      fill: (u) => hatch(u, index, color) });
  });
  draw("cfd", { series, scales: { x: { time: true } }, axes: [{}, { label: "tasks arrived" }] }, columns);
  const first = data.points[0];
  const last = data.points[data.points.length - 1];
  const done = steps.filter((s) => s.kind === "done");
  const active = steps.find((s) => s.kind === "active");
  const arrived = (p, s) => (p && s ? p.arrived[s.id] : 0);
  const finished = done.length ? arrived(last, done[0]) - arrived(first, done[0]) : 0;
  const inProgress = active && done.length ? arrived(last, active) - arrived(last, done[0]) : 0;
  summarize(sec, "From " + when(first && first.at) + " to " + when(last && last.at) + ": " + finished + " tasks finished; " +
    inProgress + " in progress at the end. Arrived by the end: " + steps.map((s) => s.name + " " + arrived(last, s)).join(", ") + ".");
  fillTable(sec, ["at", ...steps.map((s) => s.name)], data.points.map((p) => [when(p.at), ...steps.map((s) => p.arrived[s.id])]));
}

async function wip() {
  const sec = section("wip");
  const data = await getJSON(endpoint("wip", byLane({ interval: "day" })));
  csvLink(sec, "wip", byLane({ interval: "day" }));
  const xs = data.points.map((p) => Date.parse(p.at) / 1000);
  const steps = data.steps;
  const series = [{}];
  const columns = [xs];
  steps.forEach((step, index) => {
    const color = COLORS[index % COLORS.length];
    columns.push(data.points.map((p) => p.counts[step.id]));
    series.push({ label: step.name, stroke: color, width: 2, dash: DASHES[index % DASHES.length] });
    const limits = data.points.map((p) => p.limits[step.id] || null);  // the limit in force then
    if (!limits.some((n) => n)) return;
    columns.push(limits);
    series.push({ label: step.name + " limit", stroke: color, width: 1, dash: [4, 4], points: { show: false } });
  });
  const queuedTotal = data.points.map((p) => Object.values(p.queued).reduce((a, b) => a + b, 0));
  if (queuedTotal.some((n) => n > 0)) {
    columns.push(queuedTotal);
    series.push({ label: "Queued (all steps)", stroke: "#000", width: 1, dash: [1, 3] });
  }
  draw("wip", { series, scales: { x: { time: true } }, axes: [{}, { label: "tasks" }] }, columns);
  const last = data.points[data.points.length - 1];
  summarize(sec, "At " + when(last && last.at) + ": " + steps.map((s) => s.name + " " + (last ? last.counts[s.id] : 0) +
    (last && last.limits[s.id] ? " of " + last.limits[s.id] : "") + (last && last.queued[s.id] ? " (+" + last.queued[s.id] + " queued)" : "")).join(", ") + ".");
  fillTable(sec, ["at", ...steps.map((s) => s.name), ...steps.map((s) => s.name + " queued")],
    data.points.map((p) => [when(p.at), ...steps.map((s) => p.counts[s.id]), ...steps.map((s) => p.queued[s.id])]));
}

async function cycleTimes() {
  const sec = section("cycle-times");
  const data = await getJSON(endpoint("cycle-times", byLane()));
  csvLink(sec, "cycle-times", byLane());
  const items = data.items.filter((i) => i.cycle_seconds != null);
  const xs = items.map((i) => Date.parse(i.finished_at) / 1000);
  const ys = items.map((i) => i.cycle_seconds / 3600);
  const series = [{}, { label: "Finished task (cycle, h)", stroke: COLORS[0], paths: () => null,
    points: { show: true, size: 7, fill: COLORS[0] } }];
  const columns = [xs, ys];
  ["50", "85", "95"].forEach((p, k) => {
    const v = data.percentiles[p];
    if (v == null) return;
    columns.push(xs.map(() => v / 3600));
    series.push({ label: p + "th percentile " + hours(v) + " h", stroke: "#495057", width: 1.5, dash: DASHES[k + 1], points: { show: false } });
  });
  draw("cycle-times", { series, scales: { x: { time: true } }, axes: [{}, { label: "hours" }] }, columns);
  const p = data.percentiles;
  summarize(sec, items.length ? items.length + " tasks finished. 50% within " + hours(p["50"]) + " h, 85% within " +
    hours(p["85"]) + " h, 95% within " + hours(p["95"]) + " h." + perLane(data.lanes) : "No task finished in this window.");
  fillTable(sec, ["task", "started", "finished", "cycle (h)", "lead (h)", "blocked (h)"],
    data.items.map((i) => [i.title, when(i.started_at), when(i.finished_at), hours(i.cycle_seconds), hours(i.lead_seconds), hours(i.blocked_seconds)]));
}

/* "Per lane: A 85% within 3.0 h (4 tasks); ..." when the board has several lanes and some finished. */
function perLane(lanes) {
  const finished = lanes.filter((l) => l.percentiles["85"] != null);
  if (lanes.length < 2 || !finished.length) return "";
  return " Per lane: " + finished.map((l) => l.name + " 85% within " + hours(l.percentiles["85"]) + " h (" + l.count +
    (l.count === 1 ? " task)" : " tasks)")).join("; ") + ".";
}

async function throughput() {
  const sec = section("throughput");
  const interval = form.elements.interval.value;
  const data = await getJSON(endpoint("throughput", byLane({ interval })));
  csvLink(sec, "throughput", byLane({ interval }));
  const xs = data.buckets.map((b) => Date.parse(b.start) / 1000);
  const ys = data.buckets.map((b) => b.count);
  draw("throughput", {
    series: [{}, { label: "Finished per " + interval, stroke: COLORS[2], fill: (u) => hatch(u, 0, COLORS[2]),
      paths: uPlot.paths.bars({ size: [0.8, 60], align: 1 }), points: { show: false } }],
    scales: { x: { time: true } }, axes: [{}, { label: "tasks" }],
  }, [xs, ys]);
  const total = ys.reduce((a, b) => a + b, 0);
  summarize(sec, total + " tasks finished in " + ys.length + " " + interval + (ys.length === 1 ? "" : "s") +
    ", at most " + Math.max(0, ...ys) + " in one " + interval + ".");
  fillTable(sec, [interval + " starting", "finished"], data.buckets.map((b) => [when(b.start), b.count]));
}

async function aging(board) {
  const sec = section("aging");
  const data = await getJSON(endpoint("aging", byLane()));
  csvLink(sec, "aging", byLane());
  const names = Object.fromEntries(board.steps.map((s) => [s.id, s.name]));
  const columnsOf = [...new Set(data.items.map((i) => i.step_id))];
  const xs = data.items.map((i, k) => columnsOf.indexOf(i.step_id) + 1 + ((k % 7) - 3) * 0.04);
  const order = xs.map((x, k) => k).sort((a, b) => xs[a] - xs[b]);
  const series = [{}, { label: "Card age (h)", stroke: COLORS[1], paths: () => null, points: { show: true, size: 8, fill: COLORS[1] } }];
  const columns = [order.map((k) => xs[k]), order.map((k) => (data.items[k].age_seconds || 0) / 3600)];
  ["50", "85", "95"].forEach((p, k) => {
    const v = data.percentiles[p];
    if (v == null) return;
    columns.push(columns[0].map(() => v / 3600));
    series.push({ label: p + "th pct of cycle " + hours(v) + " h", stroke: "#495057", dash: DASHES[k + 1], points: { show: false } });
  });
  draw("aging", {
    series, scales: { x: { time: false, range: [0.5, columnsOf.length + 0.5] } },
    axes: [{ splits: () => columnsOf.map((s, i) => i + 1), values: (u, splits) => splits.map((v) => names[columnsOf[v - 1]] || "") },
      { label: "hours" }],
  }, columns);
  const older = data.items.filter((i) => i.percentile_band === ">95" || i.percentile_band === "85-95").length;
  summarize(sec, data.items.length + " cards in progress; " + older + " older than 85% of the tasks finished in the window.");
  fillTable(sec, ["task", "step", "age (h)", "older than"], data.items.map((i) => [i.task_id.slice(0, 8), names[i.step_id] || "",
    hours(i.age_seconds), ({ "<50": "fewer than 50%", "50-85": "50%", "85-95": "85%", ">95": "95%" })[i.percentile_band] || "—"]));
}

async function limits() {
  const sec = section("limits");
  const data = await getJSON(endpoint("limits"));
  csvLink(sec, "limits");
  const rows = [];
  data.limits.forEach((l) => {
    const head = [l.scope, l.name, l.limit, (100 * l.at_limit_ratio).toFixed(1) + "%", (100 * l.over_limit_ratio).toFixed(1) + "%", l.never_reached ? "never reached" : ""];
    if (!l.breaches.length) rows.push([...head, "", "", "", ""]);
    l.breaches.forEach((b) => rows.push([...head, when(b.started_at), b.ended_at ? when(b.ended_at) : "ongoing", "+" + b.max_over,
      b.causes.map((c) => (c.kind === "forced" ? "forced by " + (c.actor || "operator") + ": " + c.reason : "limit lowered")).join("; ")]));
  });
  fillTable(sec, ["of", "name", "limit", "at limit", "over limit", "", "breach from", "until", "most over", "causes"], rows);
  const breaches = data.limits.reduce((n, l) => n + l.breaches.length, 0);
  const never = data.limits.filter((l) => l.never_reached).map((l) => l.name);
  summarize(sec, data.limits.length + " limits, " + breaches + " breaches." + (never.length ? " Never reached: " + never.join(", ") + "." : ""));
}

async function queues() {
  const sec = section("queues");
  const data = await getJSON(endpoint("queues"));
  csvLink(sec, "queues");
  fillTable(sec, ["step", "waits", "50th (h)", "85th (h)", "95th (h)", "queued", "promoted", "pulled"],
    data.steps.map((s) => [s.name, s.waits, hours(s.wait_percentiles["50"]), hours(s.wait_percentiles["85"]),
      hours(s.wait_percentiles["95"]), s.queued, s.promoted, s.pulled]));
  const pulled = data.steps.reduce((n, s) => n + s.pulled, 0);
  const waits = data.steps.reduce((n, s) => n + s.waits, 0);
  summarize(sec, waits + " waits in queues ended in this window; " + pulled + " tasks were pulled.");
}

function days(seconds) { return seconds == null ? "—" : (seconds / DAY).toFixed(1); }

function percent(ratio) { return ratio == null ? "—" : (100 * ratio).toFixed(0) + "%"; }

async function forecast() {
  const sec = section("forecast");
  const question = sec.querySelector('[data-role="question"]');
  const byDate = question.elements.question.value === "until";
  const ask = byDate ? { until: question.elements.until.value } : { items: question.elements.items.value };
  const data = await getJSON(endpoint("forecast", ask));
  csvLink(sec, "forecast", Object.assign({ seed: data.seed }, ask));
  const unit = byDate ? "tasks" : "days";
  draw("forecast", {
    series: [{ label: unit }, { label: "Simulated futures", stroke: COLORS[0], fill: (u) => hatch(u, 0, COLORS[0]),
      paths: uPlot.paths.bars({ size: [0.8, 40] }), points: { show: false } }],
    scales: { x: { time: false } }, axes: [{ label: unit }, { label: "futures" }],
  }, [data.histogram.map((b) => b.value), data.histogram.map((b) => b.trials)]);
  const p = data.percentiles;
  const history = data.history.finished + " tasks finished in the " + data.history.days + " days drawn from (" +
    data.history.throughput_per_day.toFixed(2) + " a day; seed " + data.seed + ").";
  let text;
  if (byDate) {
    text = "By " + data.until + ": at least " + p["50"] + " tasks (50%), " + p["85"] + " (85%), " + p["95"] + " (95%). ";
  } else if (p["50"] == null) {
    text = "Not within five years at this throughput. ";
  } else {
    const at = (k) => (p[k] == null ? "not within five years" : data.dates[k] + " (" + p[k] + " days)");
    text = data.items + " tasks done by " + at("50") + " (50%), " + at("85") + " (85%), " + at("95") + " (95%). ";
  }
  summarize(sec, text + history);
  fillTable(sec, [unit, "futures"], data.histogram.map((b) => [b.value, b.trials]));
}

async function sle() {
  const sec = section("sle");
  const data = await getJSON(endpoint("sle"));
  csvLink(sec, "sle");
  showSles(sec, data);
}

function showSles(sec, data) {
  const dayText = (n) => n + (n === 1 ? " day" : " days");
  fillTable(sec, ["class of service", "85% finish within", "set by", "from tasks"],
    data.sles.map((s) => [s.class_of_service, s.days == null ? "—" : dayText(s.days), s.set_by, s.sample]));
  summarize(sec, data.sles.filter((s) => s.days != null).map((s) => s.class_of_service + ": 85% within " + dayText(s.days) +
    (s.set_by === "owner" ? " (set by an owner)" : " (" + s.sample + " tasks)")).join("; ") || "No task finished in this window.");
}

/* An owner's service level: PUT, then the section shows the answer. */
const sleForm = section("sle").querySelector('[data-role="sle-form"]');
if (sleForm) {
  sleForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    const status = sleForm.querySelector('[data-role="sle-status"]');
    const days = sleForm.elements.days.value;
    const body = { class_of_service: sleForm.elements.class_of_service.value, days: days === "" ? null : Number(days) };
    const token = (document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/) || [])[1] || "";
    const response = await fetch(endpoint("sle"), { method: "PUT", credentials: "same-origin",
      headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": token }, body: JSON.stringify(body) });
    const data = await response.json().catch(() => ({}));
    if (!response.ok) {
      status.textContent = "Not saved: " + (data.errors ? Object.values(data.errors).flat().join(" ") : data.detail || "HTTP " + response.status);
      return;
    }
    status.textContent = body.days == null ? "The " + body.class_of_service + " service level comes from the history again."
      : "Service level set: 85% of " + body.class_of_service + " tasks within " + body.days + (body.days === 1 ? " day." : " days.");
    showSles(section("sle"), data);
  });
}

async function advice() {
  const sec = section("advice");
  const data = await getJSON(endpoint("advice"));
  csvLink(sec, "advice");
  const judged = (l) => l.never_reached ? "never reached" : l.always_at_limit ? "always at or over it" :
    percent(l.at_limit_ratio) + " of the time";
  fillTable(sec, ["limit of", "limit", "at the limit", "average WIP", "throughput / day", "average days", "suggested", "arithmetic"],
    data.limits.map((l) => [l.scope + " " + l.name, l.limit, judged(l), l.avg_wip.toFixed(2), l.throughput_per_day.toFixed(2),
      l.avg_cycle_days == null ? "—" : l.avg_cycle_days.toFixed(2), l.suggested_limit == null ? "—" : l.suggested_limit, l.arithmetic]));
  const changes = data.limits.filter((l) => l.suggested_limit != null && l.suggested_limit !== l.limit);
  summarize(sec, data.limits.length + " limits. " + (changes.length ? changes.map((l) => l.name + ": " + l.limit + " → " +
    l.suggested_limit).join(", ") + "." : "No change suggested."));
}

/* The limit changes since the window's start, in whole days (1 to 183). */
async function experiments() {
  const sec = section("experiments");
  const from = new Date(form.elements.from.value + "T00:00:00Z");
  const back = Math.min(183, Math.max(1, Math.ceil((Date.now() - from.getTime()) / (DAY * 1000))));
  const url = (extra) => "/api/v1/workflows/" + workflowId + "/flow/experiments/?" + new URLSearchParams(Object.assign({ days: back }, extra));
  const data = await getJSON(url());
  sec.querySelector('[data-role="csv"]').href = url({ format: "csv" });
  const cycles = (p, n) => n ? days(p["50"]) + " / " + days(p["85"]) + " / " + days(p["95"]) : "—";
  const perDay = (x) => x == null ? "—" : x.toFixed(2);
  fillTable(sec, ["when", "who", "change", "span (d)", "finished before", "finished after", "throughput / day before",
    "throughput / day after", "cycle 50/85/95 (d) before", "cycle 50/85/95 (d) after"],
    data.experiments.map((e) => [when(e.at), e.actor || "—",
      e.changes.map((c) => c.scope + " " + c.name + ": " + (SETTINGS[c.field] || c.field) + " " + c.before + " → " + c.after).join("; "),
      e.span_days.toFixed(1), e.before.finished, e.after.finished, perDay(e.before.throughput_per_day),
      perDay(e.after.throughput_per_day), cycles(e.before.cycle_percentiles, e.before.cycle_sample),
      cycles(e.after.cycle_percentiles, e.after.cycle_sample)]));
  summarize(sec, data.experiments.length ? data.experiments.length + (data.experiments.length === 1 ? " limit change" :
    " limit changes") + " in the last " + data.days + " days." : "No limit changed in the last " + data.days + " days.");
}

async function blockers() {
  const sec = section("blockers");
  const data = await getJSON(endpoint("blockers"));
  csvLink(sec, "blockers");
  blockerTypes(data);
  fillTable(sec, ["reason", "blocks", "blocked days", "median (h)", "still blocked"],
    data.blockers.map((b) => [b.reason, b.count, b.blocked_days.toFixed(2), hours(b.median_seconds), b.ongoing]));
  const total = data.blockers.reduce((n, b) => n + b.count, 0);
  summarize(sec, total ? total + " blocks; most blocked time: " + data.blockers[0].reason + " (" +
    data.blockers[0].blocked_days.toFixed(1) + " days)." : "No block in this window.");
}

/* The same answer by blocker type: one request serves both sections. */
function blockerTypes(data) {
  const sec = section("blocker-types");
  csvLink(sec, "blockers");
  const share = (s) => s == null ? "—" : (s * 100).toFixed(1) + "%";
  fillTable(sec, ["type", "blocks", "blocked days", "median (h)", "still blocked", "slot-days held", "share of capacity"],
    data.types.map((t) => [t.type_id ? t.name : "No type", t.count, t.held_days.toFixed(2), hours(t.median_seconds), t.ongoing,
      t.capacity_days.toFixed(2), share(t.capacity_share)]));
  const top = data.types[0];
  summarize(sec, top ? "Most blocked time: " + (top.type_id ? top.name : "no type") + " (" + top.held_days.toFixed(1) +
    " days, " + share(top.capacity_share) + " of the " + data.occupied_days.toFixed(1) + " slot-days held)." : "No block in this window.");
}

async function efficiency() {
  const sec = section("efficiency");
  const data = await getJSON(endpoint("efficiency"));
  csvLink(sec, "efficiency");
  fillTable(sec, ["task", "finished", "lead (d)", "working (d)", "waiting (d)", "efficiency"],
    data.items.map((i) => [i.title, when(i.finished_at), days(i.lead_seconds), days(i.working_seconds), days(i.waiting_seconds),
      percent(i.efficiency)]));
  summarize(sec, data.items.length ? data.items.length + " tasks finished; " + percent(data.efficiency) +
    " of their lead time was worked (median task " + percent(data.percentiles["50"]) + ")." : "No task finished in this window.");
}

const SETTINGS = { wip_limit: "WIP limit", on_full: "when full", kind: "kind", pull_from_step_id: "pulls from",
  step_ids: "steps", expedite_limit: "expedite allowance" };

async function limitChanges() {
  const sec = section("limit-changes");
  const [data, steps] = await Promise.all([getJSON(endpoint("limit-changes", { page_size: 1000 })),
    getJSON("/api/v1/steps/?workflow=" + workflowId + "&page_size=1000")]);  // names for the step ids
  csvLink(sec, "limit-changes", { page_size: 1000 });
  const names = Object.fromEntries(steps.results.map((s) => [s.id, s.name]));
  const shown = (field, value) => {
    if (value == null) return "—";
    if (field === "pull_from_step_id") return names[value] || "a deleted step";
    if (field === "step_ids") return value.map((id) => names[id] || "a deleted step").join(", ") || "none";
    if (field === "wip_limit" && value === 0) return "none";
    return String(value);
  };
  fillTable(sec, ["when", "who", "of", "setting", "before", "after"],
    data.results.map((c) => [when(c.at), c.actor || "—", c.scope + " " + c.name, SETTINGS[c.field] || c.field,
      shown(c.field, c.before), shown(c.field, c.after)]));
  summarize(sec, data.count ? data.count + (data.count === 1 ? " change" : " changes") + " in this window" +
    (data.count > data.results.length ? "; the first " + data.results.length + " are listed (the CSV has them too)." : ".")
    : "No change of a limit or flow rule in this window.");
}

/* The judgements of the window: fetched when the window changes, not on every board change
   (the throttle allows the live figures' refetches, not these on top). */
async function judge() {
  try {
    await Promise.all([forecast(), sle(), advice(), experiments(), blockers(), efficiency(), limitChanges()]);
  } catch (error) {
    alertBox.textContent = "Could not load the figures: " + error.message;
    alertBox.hidden = false;
  }
}

async function refresh() {
  alertBox.hidden = true;
  try {
    const board = await getJSON("/api/v1/workflows/" + workflowId + "/board/?per_step=1");
    await Promise.all([cfd(), wip(), cycleTimes(), throughput(), aging(board), limits(), queues()]);
  } catch (error) {
    alertBox.textContent = "Could not load the figures: " + error.message;
    alertBox.hidden = false;
  }
}

const refreshSoon = coalesced(refresh, REFRESH_MS);

/* Every message says the board changed, except the snapshot the first connection opens
   with (the page has just fetched the figures); after a reconnect, changes may have been
   missed, so that snapshot refreshes too. */
function connect(first) {
  const scheme = location.protocol === "https:" ? "wss://" : "ws://";
  const socket = new WebSocket(scheme + location.host + "/ws/workflows/" + workflowId + "/");
  socket.addEventListener("open", () => { live.dataset.state = "live"; live.textContent = "Live"; });
  socket.addEventListener("message", (event) => {
    if (first && JSON.parse(event.data).type === "board.snapshot") { first = false; return; }
    refreshSoon();
  });
  socket.addEventListener("close", () => {
    live.dataset.state = "offline";
    live.textContent = "Reconnecting…";
    setTimeout(() => connect(false), 3000);
  });
}

form.addEventListener("submit", (event) => { event.preventDefault(); refresh(); judge(); });
form.querySelectorAll("[data-days]").forEach((b) => b.addEventListener("click", () => { setDays(Number(b.dataset.days)); refresh(); judge(); }));
const question = section("forecast").querySelector('[data-role="question"]');
question.addEventListener("submit", (event) => {
  event.preventDefault();
  alertBox.hidden = true;
  forecast().catch((error) => { alertBox.textContent = "Could not forecast: " + error.message; alertBox.hidden = false; });
});
form.elements.interval.addEventListener("change", refresh);
if (form.elements.lane) form.elements.lane.addEventListener("change", refresh);
window.addEventListener("resize", refreshSoon);
setDays(30);
question.elements.until.value = isoDate(new Date(Date.now() + 30 * DAY * 1000));
refreshSoon();
judge();
connect(true);
