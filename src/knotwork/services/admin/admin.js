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
    } else if (action === "unmerge") {
      url = "/v1/merges/" + button.getAttribute("data-merge") + "/unmerge";
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
})();
