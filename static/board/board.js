/* kandev live board: drag and drop, keyboard moves, optimistic writes, live updates.
 *
 * The page is server-rendered; this script keeps a model of the board (steps + tasks)
 * and re-renders only the columns a change touched. Applying a server message or a
 * snapshot to the model is idempotent, so the client's own optimistic move, confirmed
 * later by its broadcast, is never applied twice.
 */
(function () {
  "use strict";

  var root = document.getElementById("board");
  if (!root) return;

  var PRIORITY_RANK = { critical: 0, high: 1, medium: 2, low: 3, none: 4 };
  var PRIORITIES = ["critical", "high", "medium", "low", "none"];
  var workflowId = root.dataset.workflowId;
  var canWrite = root.dataset.canWrite === "true";
  var alertBox = document.getElementById("board-alert");
  var liveBadge = document.querySelector('[data-role="live"]');

  var state = {
    version: 0,
    steps: [], // in position order, without tasks
    tasks: new Map(), // id -> task (with step_id)
    pending: new Map(), // task id -> {stepId, index}: optimistic moves awaiting the server
    refetching: false,
    buffered: [],
  };
  var sortables = [];

  // ---- model -------------------------------------------------------------------------

  function loadBoard(board, initial) {
    var structureChanged = !initial && stepSignature(board.steps) !== stepSignature(state.steps);
    state.version = board.workflow.version;
    state.steps = board.steps.map(function (s) {
      var copy = Object.assign({}, s);
      delete copy.tasks;
      return copy;
    });
    state.tasks = new Map();
    board.steps.forEach(function (s) {
      s.tasks.forEach(function (t) {
        state.tasks.set(t.id, Object.assign({}, t, { step_id: s.id }));
      });
    });
    state.pending.forEach(function (move, taskId) {
      placeOptimistically(taskId, move.stepId, move.index);
    });
    if (structureChanged) {
      rebuildColumns();
    } else {
      renderColumns(state.steps.map(function (s) { return s.id; }));
    }
    root.dataset.version = String(state.version);
  }

  function stepSignature(steps) {
    return JSON.stringify(steps.map(function (s) {
      return [s.id, s.name, s.color, s.wip_limit, s.on_full, s.position];
    }));
  }

  function stepById(id) {
    for (var i = 0; i < state.steps.length; i++) if (state.steps[i].id === id) return state.steps[i];
    return null;
  }

  function boardOrder(a, b) {
    return (a.position - b.position) ||
      ((PRIORITY_RANK[a.priority] ?? 4) - (PRIORITY_RANK[b.priority] ?? 4)) ||
      (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0) ||
      (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  }

  function queueOrder(a, b) {
    return ((a.queued_at || "") < (b.queued_at || "") ? -1 : (a.queued_at || "") > (b.queued_at || "") ? 1 : 0) ||
      (a.id < b.id ? -1 : 1);
  }

  function tasksOf(stepId) {
    var list = [];
    state.tasks.forEach(function (t) { if (t.step_id === stepId) list.push(t); });
    return list.sort(boardOrder);
  }

  function copyTasksOf(stepIds) {
    var saved = new Map();
    state.tasks.forEach(function (t) {
      if (stepIds.indexOf(t.step_id) !== -1) saved.set(t.id, Object.assign({}, t));
    });
    return saved;
  }

  /* Mirror of the server's move with a position: the task goes to `index` of the
     target step's order and that step is numbered 0..n-1. */
  function placeOptimistically(taskId, stepId, index) {
    var task = state.tasks.get(taskId);
    if (!task) return;
    var order = tasksOf(stepId).filter(function (t) { return t.id !== taskId; });
    index = Math.max(0, Math.min(index, order.length));
    order.splice(index, 0, task);
    if (task.step_id !== stepId) {
      task.step_id = stepId;
      task.admitted = true;
      task.queued_at = null;
      task.entered_step_at = new Date().toISOString();
    }
    order.forEach(function (t, i) { t.position = i; });
  }

  // ---- live messages -----------------------------------------------------------------

  function receive(message) {
    if (message.type === "board.snapshot") {
      loadBoard(message.board);
      drainBuffer();
      return;
    }
    if (state.refetching) {
      state.buffered.push(message);
      return;
    }
    if (message.version <= state.version) return; // already part of what we show
    if (message.version !== state.version + 1) {
      state.buffered.push(message);
      refetch();
      return;
    }
    apply(message);
  }

  function apply(message) {
    state.version = message.version;
    root.dataset.version = String(state.version);
    if (/^(step|workflow)\./.test(message.type)) {
      refetch(); // the columns themselves changed: take the whole board
      return;
    }
    var touched = new Set();
    (message.tasks || []).forEach(function (t) {
      var old = state.tasks.get(t.id);
      if (old) touched.add(old.step_id);
      if (t.archived_at) {
        state.tasks.delete(t.id);
      } else {
        state.tasks.set(t.id, Object.assign({}, old || {}, t));
        touched.add(t.step_id);
      }
      state.pending.delete(t.id); // the server has decided this task's place
    });
    (message.deleted_task_ids || []).forEach(function (id) {
      var old = state.tasks.get(id);
      if (old) touched.add(old.step_id);
      state.tasks.delete(id);
      state.pending.delete(id);
    });
    var orders = message.orders || {};
    Object.keys(orders).forEach(function (stepId) {
      orders[stepId].forEach(function (id, i) {
        var t = state.tasks.get(id);
        if (t && t.step_id === stepId) t.position = i;
      });
      touched.add(stepId);
    });
    (message.steps || []).forEach(function (s) {
      var step = stepById(s.id);
      if (step) step.wip_limit = s.wip_limit;
      touched.add(s.id);
    });
    renderColumns(Array.from(touched));
  }

  function drainBuffer() {
    var queued = state.buffered.sort(function (a, b) { return a.version - b.version; });
    state.buffered = [];
    queued.forEach(receive);
  }

  function refetch() {
    if (state.refetching) return;
    state.refetching = true;
    fetch("/api/v1/workflows/" + workflowId + "/board/", { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.json();
      })
      .then(function (board) {
        state.refetching = false;
        // A snapshot that arrived over the socket meanwhile may already be newer.
        if (board.workflow.version >= state.version) loadBoard(board);
        if (!alertBox.hidden && alertBox.dataset.kind === "refresh") hideAlert();
        drainBuffer();
      })
      .catch(function () {
        state.refetching = false;
        showAlert("Could not refresh the board. Retrying…", "refresh");
        setTimeout(refetch, 2000);
      });
  }

  function connect(attempt) {
    var scheme = location.protocol === "https:" ? "wss://" : "ws://";
    var socket = new WebSocket(scheme + location.host + "/ws/workflows/" + workflowId + "/");
    setLive("connecting");
    socket.onopen = function () { attempt = 0; setLive("live"); };
    socket.onmessage = function (event) { receive(JSON.parse(event.data)); };
    socket.onclose = function () {
      setLive("offline");
      // The snapshot sent on reconnect replaces whatever was missed meanwhile.
      setTimeout(function () { connect(attempt + 1); }, Math.min(10000, 500 * Math.pow(2, attempt)));
    };
  }

  function setLive(s) {
    if (!liveBadge) return;
    liveBadge.dataset.state = s;
    liveBadge.textContent = { live: "Live", connecting: "Connecting…", offline: "Offline, reconnecting…" }[s];
  }

  // ---- rendering ---------------------------------------------------------------------

  function columnEl(stepId) {
    return root.querySelector('.column[data-step-id="' + stepId + '"]');
  }

  function ageText(iso) {
    if (!iso) return "";
    var seconds = Math.max(0, Math.floor((Date.now() - Date.parse(iso)) / 1000));
    if (seconds >= 86400) return Math.floor(seconds / 86400) + "d";
    if (seconds >= 3600) return Math.floor(seconds / 3600) + "h";
    if (seconds >= 60) return Math.floor(seconds / 60) + "m";
    return "just now";
  }

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") node.textContent = attrs[k];
      else node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { node.appendChild(c); });
    return node;
  }

  function cardEl(task, existing) {
    var card = existing || el("li", { tabindex: "0", "aria-describedby": "move-help" });
    card.className = "card priority-" + task.priority + (task.is_ephemeral ? " is-ephemeral" : "");
    card.dataset.taskId = task.id;
    card.replaceChildren(
      el("span", { class: "card-title", text: task.title }),
      el("span", { class: "card-meta" }, [
        el("span", { class: "priority", "data-role": "priority", text: task.priority }),
        el("time", {
          class: "age", "data-role": "age", datetime: task.entered_step_at || "",
          title: "Time in this step", text: ageText(task.entered_step_at),
        }),
      ])
    );
    return card;
  }

  function renderColumn(stepId) {
    var section = columnEl(stepId);
    var step = stepById(stepId);
    if (!section || !step) return;
    var tasks = tasksOf(stepId);
    var admitted = tasks.filter(function (t) { return t.admitted; });
    var queued = tasks.filter(function (t) { return !t.admitted; }).sort(queueOrder);
    fillList(section.querySelector('[data-role="cards"]'), admitted);
    fillList(section.querySelector('[data-role="queued-cards"]'), queued);
    var occupied = admitted.filter(function (t) { return !t.is_ephemeral; }).length;
    var queuedCount = queued.filter(function (t) { return !t.is_ephemeral; }).length;
    renderHeader(section, step, occupied, queuedCount);
  }

  /* Re-render columns; a focused card keeps the focus wherever it went. */
  function renderColumns(stepIds) {
    var active = document.activeElement;
    var focusedId = active && active.classList && active.classList.contains("card")
      ? active.dataset.taskId : null;
    stepIds.forEach(function (id) { if (stepById(id)) renderColumn(id); });
    if (focusedId) {
      var again = root.querySelector('.card[data-task-id="' + focusedId + '"]');
      if (again && document.activeElement !== again) again.focus();
    }
  }

  function fillList(list, tasks) {
    var existing = new Map();
    list.querySelectorAll(".card").forEach(function (c) { existing.set(c.dataset.taskId, c); });
    tasks.forEach(function (task) {
      // A card may currently sit in another list (dragged, or moved by someone else).
      var card = existing.get(task.id) || root.querySelector('.card[data-task-id="' + task.id + '"]');
      list.appendChild(cardEl(task, card));
      existing.delete(task.id);
    });
    // Whatever is left here now belongs elsewhere or is gone (it was rendered there, or deleted).
    Array.prototype.slice.call(list.children).forEach(function (c) {
      var task = state.tasks.get(c.dataset.taskId);
      if (!task || tasks.indexOf(task) === -1) c.remove();
    });
  }

  function renderHeader(section, step, occupied, queued) {
    var limit = step.wip_limit;
    var over = limit > 0 && occupied > limit;
    var count = section.querySelector('[data-role="wip-count"]');
    var label = limit ? occupied + " of " + limit + " (WIP limit)" : occupied + " tasks";
    if (over) label = occupied + " of " + limit + ": over the WIP limit";
    count.textContent = limit ? occupied + "/" + limit : String(occupied);
    count.setAttribute("aria-label", label);
    count.title = label;
    count.parentElement.classList.toggle("is-over", over);
    section.querySelector('[data-role="wip-warning"]').hidden = !over;
    section.dataset.overLimit = over ? "true" : "false";
    section.querySelector('[data-role="queue"]').hidden = step.on_full !== "queue" && queued === 0;
    section.querySelector('[data-role="queue-count"]').textContent = String(queued);
  }

  function buildColumn(step) {
    var nameId = "step-name-" + step.id;
    var section = el("section", {
      class: "column", "data-step-id": step.id, "data-over-limit": "false", "data-on-full": step.on_full,
      style: "--step-color: " + (step.color || "#64748b"), "aria-labelledby": nameId,
    }, [
      el("header", { class: "column-header" }, [
        el("span", { class: "step-dot", "aria-hidden": "true" }),
        el("h2", { id: nameId, "data-role": "step-name", text: step.name }),
        el("span", { class: "wip" }, [
          el("span", { class: "wip-warning", "data-role": "wip-warning", hidden: "" }, [
            el("span", { "aria-hidden": "true", text: "⚠" }), document.createTextNode(" Over limit"),
          ]),
          el("span", { class: "wip-count", "data-role": "wip-count" }),
        ]),
      ]),
      el("ol", { class: "cards", "data-role": "cards", "data-step-id": step.id, "aria-label": step.name + " tasks" }),
      el("div", { class: "queue", "data-role": "queue" }, [
        el("h3", { text: "Queued " }, [el("span", { class: "queue-count", "data-role": "queue-count", text: "0" })]),
        el("ol", {
          class: "cards queued-cards", "data-role": "queued-cards", "data-step-id": step.id,
          "aria-label": step.name + " queued tasks",
        }),
      ]),
    ]);
    if (canWrite) {
      var titleId = "add-title-" + step.id;
      var priorityId = "add-priority-" + step.id;
      var select = el("select", { id: priorityId, name: "priority" }, PRIORITIES.map(function (p) {
        var option = el("option", { value: p, text: p });
        if (p === "medium") option.selected = true;
        return option;
      }));
      section.appendChild(el("form", { class: "add-task", "data-role": "add-task", "data-step-id": step.id }, [
        el("label", { class: "visually-hidden", for: titleId, text: "New task in " + step.name }),
        el("input", { id: titleId, name: "title", placeholder: "Add a task…", maxlength: "500", required: "" }),
        el("label", { class: "visually-hidden", for: priorityId, text: "Priority" }),
        select,
        el("button", { type: "submit", class: "button button-small", text: "Add" }),
      ]));
    }
    return section;
  }

  function rebuildColumns() {
    sortables.forEach(function (s) { s.destroy(); });
    sortables = [];
    root.replaceChildren.apply(root, state.steps.map(buildColumn));
    state.steps.forEach(function (s) { renderColumn(s.id); });
    enableDragging();
  }

  // ---- writes ------------------------------------------------------------------------

  var send = window.kandevApi.send;

  function refusalText(result) {
    var data = result.data || {};
    if (data.errors) {
      return Object.keys(data.errors).map(function (f) { return f + ": " + data.errors[f].join(" "); }).join(" ");
    }
    if (data.detail) return data.detail;
    return "The server refused the change (HTTP " + result.status + ").";
  }

  function move(taskId, stepId, index) {
    var task = state.tasks.get(taskId);
    if (!task) return;
    var fromStepId = task.step_id;
    var saved = copyTasksOf([fromStepId, stepId]);
    var versionAtMove = state.version;
    hideAlert();
    placeOptimistically(taskId, stepId, index);
    state.pending.set(taskId, { stepId: stepId, index: index });
    renderColumns([fromStepId, stepId]);

    function rollBack(text, kind) {
      state.pending.delete(taskId);
      saved.forEach(function (t, id) { state.tasks.set(id, t); });
      renderColumns([fromStepId, stepId]);
      showAlert(text, kind);
      if (state.version !== versionAtMove) refetch(); // others changed these columns meanwhile
    }

    send("POST", "/api/v1/tasks/" + taskId + "/move/", { step_id: stepId, position: index })
      .then(function (result) {
        if (result.ok) {
          state.pending.delete(taskId);
          return;
        }
        rollBack(refusalText(result), "refused");
      })
      .catch(function () {
        rollBack("Network error: the move was not saved. Check your connection and try again.", "network");
      });
  }

  function createTask(form) {
    var title = form.elements.title.value.trim();
    if (!title) return;
    hideAlert();
    var button = form.querySelector("button");
    button.disabled = true;
    send("POST", "/api/v1/tasks/", {
      title: title, priority: form.elements.priority.value, step_id: form.dataset.stepId,
    }).then(function (result) {
      if (!result.ok) {
        showAlert(refusalText(result), "refused");
        return;
      }
      form.elements.title.value = "";
      if (!state.tasks.has(result.data.id)) {
        state.tasks.set(result.data.id, result.data);
        renderColumns([result.data.step_id]);
      }
    }).catch(function () {
      showAlert("Network error: the task was not created. Check your connection and try again.", "network");
    }).finally(function () {
      button.disabled = false;
    });
  }

  function showAlert(text, kind) {
    alertBox.replaceChildren(
      el("span", { class: "alert-text", "data-role": "alert-text", text: text }),
      el("button", { type: "button", class: "alert-close", "aria-label": "Dismiss", text: "×" })
    );
    alertBox.dataset.kind = kind;
    alertBox.hidden = false;
  }

  function hideAlert() {
    alertBox.hidden = true;
    alertBox.replaceChildren();
  }

  // ---- interaction -------------------------------------------------------------------

  function enableDragging() {
    if (!canWrite || typeof Sortable === "undefined") return;
    root.querySelectorAll('[data-role="cards"], [data-role="queued-cards"]').forEach(function (list) {
      var queued = list.dataset.role === "queued-cards";
      sortables.push(Sortable.create(list, {
        group: { name: "board", put: !queued },
        sort: !queued,
        animation: 150,
        ghostClass: "card-ghost",
        chosenClass: "card-chosen",
        dragClass: "card-drag",
        onEnd: function (event) {
          var to = event.to;
          if (to.dataset.role !== "cards") return;
          if (event.from === to && event.oldIndex === event.newIndex) return;
          move(event.item.dataset.taskId, to.dataset.stepId, event.newIndex);
        },
      }));
    });
  }

  function cardIndex(card) {
    return Array.prototype.indexOf.call(card.parentElement.children, card);
  }

  function neighbourColumn(section, delta) {
    var columns = Array.prototype.slice.call(root.querySelectorAll(".column"));
    return columns[columns.indexOf(section) + delta] || null;
  }

  root.addEventListener("keydown", function (event) {
    var card = event.target.closest && event.target.closest(".card");
    if (!card) return;
    var section = card.closest(".column");
    var list = card.parentElement;
    if (event.shiftKey && canWrite && !card.closest('[data-role="queued-cards"]')) {
      var taskId = card.dataset.taskId;
      if (event.key === "ArrowRight" || event.key === "ArrowLeft") {
        var target = neighbourColumn(section, event.key === "ArrowRight" ? 1 : -1);
        if (target) {
          event.preventDefault();
          var targetList = target.querySelector('[data-role="cards"]');
          move(taskId, target.dataset.stepId, targetList.children.length);
        }
      } else if (event.key === "ArrowUp" || event.key === "ArrowDown") {
        var index = cardIndex(card) + (event.key === "ArrowDown" ? 1 : -1);
        if (index >= 0 && index < list.children.length) {
          event.preventDefault();
          move(taskId, section.dataset.stepId, index);
        }
      }
      return;
    }
    var next = null;
    if (event.key === "ArrowDown") next = card.nextElementSibling;
    else if (event.key === "ArrowUp") next = card.previousElementSibling;
    else if (event.key === "ArrowRight" || event.key === "ArrowLeft") {
      var column = neighbourColumn(section, event.key === "ArrowRight" ? 1 : -1);
      next = column && column.querySelector(".card");
    }
    if (next) {
      event.preventDefault();
      next.focus();
    }
  });

  root.addEventListener("submit", function (event) {
    var form = event.target.closest('[data-role="add-task"]');
    if (!form) return;
    event.preventDefault();
    createTask(form);
  });

  alertBox.addEventListener("click", function (event) {
    if (event.target.closest(".alert-close")) hideAlert();
  });

  setInterval(function () {
    root.querySelectorAll('[data-role="age"]').forEach(function (t) {
      t.textContent = ageText(t.getAttribute("datetime"));
    });
  }, 60000);

  // ---- start -------------------------------------------------------------------------

  loadBoard(JSON.parse(document.getElementById("board-data").textContent), true);
  enableDragging();
  connect(0);
})();
