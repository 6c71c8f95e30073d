// A card's due date in words, in the viewer's time zone: "due in 3 days", "due tomorrow",
// "due today", "overdue by 2 days". A whole-day due date (`due_all_day`) is that date for
// everyone; a moment falls on the date it has in the viewer's zone. The same words on the
// card and in the task detail; `state` is what the filter bar and the card's style read.

const DAY_MS = 86_400_000;

/** The calendar date (YYYY-MM-DD) of `date` in `timeZone`. */
export function dateIn(date, timeZone) {
  return new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).format(date);
}

/** Whole days from the date `from` to the date `to` (both YYYY-MM-DD). */
const daysBetween = (from, to) => Math.round((Date.parse(to) - Date.parse(from)) / DAY_MS);

const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** {text, state} of a task's due date for a viewer in `timeZone` at `now`; state is
    "none", "overdue", "today", "week" (within the next 7 days) or "later". */
export function dueOf(task, timeZone, now = new Date()) {
  if (!task.due_at) return { text: "", state: "none" };
  const due = new Date(task.due_at);
  const dueDate = task.due_all_day ? task.due_at.slice(0, 10) : dateIn(due, timeZone);
  const days = daysBetween(dateIn(now, timeZone), dueDate);
  if (days < 0) return { text: `overdue by ${plural(-days, "day")}`, state: "overdue" };
  if (days === 0) {
    if (!task.due_all_day && due <= now) return { text: `overdue since ${timeOf(due, timeZone)}`, state: "overdue" };
    return { text: task.due_all_day ? "due today" : `due today at ${timeOf(due, timeZone)}`, state: "today" };
  }
  const text = days === 1 ? "due tomorrow" : `due in ${plural(days, "day")}`;
  return { text, state: days <= 7 ? "week" : "later" };
}

const timeOf = (date, timeZone) =>
  new Intl.DateTimeFormat(undefined, { timeZone, hour: "2-digit", minute: "2-digit" }).format(date);

/** A due date's date and time as the viewer reads them ("5 Dec 2026", "5 Dec 2026, 14:00"). */
export function dueLabel(task, timeZone) {
  if (!task.due_at) return "";
  if (task.due_all_day) {
    return new Intl.DateTimeFormat(undefined, { timeZone: "UTC", dateStyle: "medium" }).format(new Date(task.due_at));
  }
  return new Intl.DateTimeFormat(undefined, { timeZone, dateStyle: "medium", timeStyle: "short" }).format(new Date(task.due_at));
}

/** The `due_at` to send for a date and an optional wall-clock time in `timeZone`: the date
    alone (a whole day), or that moment with its UTC offset there. */
export function dueValue(date, time, timeZone) {
  if (!date) return null;
  if (!time) return date;
  const wall = Date.parse(`${date}T${time}:00Z`); // the wall clock read as if it were UTC
  let moment = wall;
  for (let i = 0; i < 2; i += 1) moment = wall - offsetAt(moment, timeZone); // settles across a DST change
  return new Date(moment).toISOString();
}

/** `timeZone`'s offset from UTC at `ms`, in ms. */
function offsetAt(ms, timeZone) {
  const parts = Object.fromEntries(new Intl.DateTimeFormat("en-US", {
    timeZone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit",
    hour: "2-digit", minute: "2-digit", second: "2-digit",
  }).formatToParts(new Date(ms)).map((p) => [p.type, p.value]));
  const asUtc = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second);
  return asUtc - Math.floor(ms / 1000) * 1000;
}

/** The date and time inputs' values of a due date in `timeZone`. */
export function dueInputs(task, timeZone) {
  if (!task.due_at) return { date: "", time: "" };
  if (task.due_all_day) return { date: task.due_at.slice(0, 10), time: "" };
  const due = new Date(task.due_at);
  const time = new Intl.DateTimeFormat("en-GB", { timeZone, hourCycle: "h23", hour: "2-digit", minute: "2-digit" }).format(due);
  return { date: dateIn(due, timeZone), time };
}
