// Knotwork admin: every button with data-action POSTs JSON to the API, then the page reloads.
(function () {
  "use strict";
  var status = document.getElementById("status");
  function show(text, ok) {
    if (!status) return;
    status.textContent = text;
    status.className = ok ? "ok" : "error";
  }
  var csrf = document.querySelector("meta[name=csrf-token]");
  csrf = csrf ? csrf.getAttribute("content") : "";
  function post(url, body) {
    var headers = { "Content-Type": "application/json" };
    if (csrf) headers["X-CSRF-Token"] = csrf;  // a signed-in session's changes carry its token
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: headers,
      body: JSON.stringify(body || {})
    }).then(function (res) {
      return res.json().then(function (data) {
        if (!res.ok) throw new Error(data.detail || res.statusText);
        return data;
      });
    });
  }
  var group = document.body.getAttribute("data-group");
  document.addEventListener("click", function (event) {
    var button = event.target.closest("button[data-action]");
    if (!button) return;
    event.preventDefault();
    var action = button.getAttribute("data-action");
    var body = { group_id: group };
    var url = null;
    if (action === "approve" || action === "reject") {
      url = "/v1/review/" + button.getAttribute("data-review") + "/" + action;
    } else if (action === "merge-into") {
      var target = button.getAttribute("data-target");
      if (!target) {
        var input = document.getElementById("target-" + button.getAttribute("data-review"));
        target = input ? input.value.trim() : "";
      }
      if (!target) { show("enter the id of the entity to merge into", false); return; }
      body.target_id = target;
      url = "/v1/review/" + button.getAttribute("data-review") + "/merge";
    } else if (action === "split") {
      var picked = document.querySelectorAll("input.pick:checked");
      if (!picked.length) { show("select the mentions to split off", false); return; }
      body.mention_ids = Array.prototype.map.call(picked, function (box) { return box.value; });
      var into = document.getElementById("split-into");
      var name = document.getElementById("split-name");
      if (into && into.value.trim()) body.into = into.value.trim();
      if (name && name.value.trim()) body.name = name.value.trim();
      url = "/v1/entities/" + button.getAttribute("data-entity") + "/split";
    } else if (action === "undo") {
      url = "/v1/actions/" + button.getAttribute("data-action-id") + "/undo";
    } else if (action === "unmerge") {
      url = "/v1/merges/" + button.getAttribute("data-merge") + "/unmerge";
    } else if (action === "bulk") {
      var what = button.getAttribute("data-bulk");
      var holder = document.getElementById("bulk-query");
      var query = holder ? holder.getAttribute("data-query") : "";
      if (!window.confirm(what + " every pending item this filter selects?")) return;
      url = "/v1/review/bulk?" + query;
      body = { group_id: group, action: what };
    } else if (action === "logout") {
      post("/admin/logout", {}).then(function () {
        window.location.href = "/admin";
      }).catch(function (err) { show(err.message, false); });
      return;
    }
    if (!url) return;
    button.disabled = true;
    post(url, body).then(function () {
      show(action + " done", true);
      window.location.reload();
    }).catch(function (err) {
      button.disabled = false;
      show(err.message, false);
    });
  });

  // keyboard: j / k move between items, a approves, r rejects, ? shows the keys
  var focused = -1;
  function items() { return document.querySelectorAll("section.review"); }
  function focusOn(index) {
    var all = items();
    if (!all.length) return;
    focused = Math.max(0, Math.min(all.length - 1, index));
    for (var i = 0; i < all.length; i++) all[i].classList.toggle("focus", i === focused);
    all[focused].scrollIntoView({ block: "nearest" });
  }
  function press(selector) {
    var all = items();
    if (focused < 0 || focused >= all.length) return;
    var target = all[focused].querySelector(selector);
    if (target) target.click();
  }
  document.addEventListener("keydown", function (event) {
    var tag = (event.target.tagName || "").toLowerCase();
    if (tag === "input" || tag === "select" || tag === "textarea" || event.ctrlKey ||
        event.metaKey || event.altKey) return;
    if (event.key === "j") focusOn(focused + 1);
    else if (event.key === "k") focusOn(focused - 1);
    else if (event.key === "a") press("button[data-action=approve]");
    else if (event.key === "r") press("button[data-action=reject]");
    else if (event.key === "?") {
      var help = document.getElementById("help");
      if (help) help.hidden = !help.hidden;
    } else return;
    event.preventDefault();
  });
})();
