// OryxOS console: a little vanilla JS, progressive enhancement only (every page works without it).
document.addEventListener("submit", function (event) {
  var form = event.target;
  var question = form.getAttribute("data-confirm");
  if (question && !window.confirm(question)) {
    event.preventDefault();
    return;
  }
  // A turn can take a while: show that it is running and prevent double submits.
  var button = form.querySelector("button[type=submit]");
  if (button) {
    button.disabled = true;
    if (form.id === "chat-form") button.textContent = "Thinking…";
  }
});
document.addEventListener("keydown", function (event) {
  // Ctrl/Cmd+Enter sends a chat message.
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && event.target.form && event.target.form.id === "chat-form") {
    event.target.form.requestSubmit();
  }
});

// Chat: the reply appears as the model writes it. The form's turn is posted to its
// data-stream URL, which answers with Server-Sent Events (see docs/api.md); without fetch
// streams (or without JavaScript) the form is posted as usual and the page comes back whole.
(function () {
  var form = document.getElementById("chat-form");
  var streamUrl = form && form.getAttribute("data-stream");
  if (!streamUrl || !window.fetch || !window.ReadableStream || !window.TextDecoder) return;

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function bubble(list, role, label) {
    var node = el("div", "msg " + role);
    node.appendChild(el("div", "role", label || role));
    list.appendChild(node);
    return node;
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var data = new FormData(form);
    var message = String(data.get("message") || "").trim();
    if (!message) return;
    var list = document.querySelector(".transcript");
    if (!list) {
      list = el("div", "transcript");
      form.parentNode.insertBefore(list, form);
    }
    bubble(list, "user").appendChild(el("div", "content", message));
    form.querySelector("textarea[name=message]").value = "";
    var reply = null, text = null, session = null, over = false;

    function current() {  // the assistant message of this model call
      if (!reply) {
        reply = bubble(list, "assistant");
        reply.classList.add("streaming");
        text = reply.appendChild(el("div", "content", ""));
      }
      return reply;
    }
    function settle() {
      if (reply) reply.classList.remove("streaming");
      reply = null;
    }
    function finish() {
      if (over) return;
      over = true;
      settle();
      var button = form.querySelector("button[type=submit]");
      button.disabled = false;
      button.textContent = "Send";
      if (session && !form.querySelector("input[name=session_id]")) {
        // a new conversation: the next message continues it, as on its own page
        var hidden = el("input");
        hidden.type = "hidden";
        hidden.name = "session_id";
        hidden.value = session.session_id;
        form.appendChild(hidden);
      }
      if (session) window.history.replaceState(null, "", session.url);
    }
    function fail(messageText) {
      current().appendChild(el("div", "error", messageText));
      finish();
    }
    var on = {
      session: function (d) { session = d; },
      text: function (d) { current(); text.textContent += d.delta; },
      text_discarded: function () { if (text) text.textContent = ""; },
      tool_call: function (d) {
        var line = current().appendChild(el("div", "toolcall", "→ "));
        line.appendChild(el("code", "", d.name));
        line.appendChild(document.createTextNode(" "));
        line.appendChild(el("code", "args", JSON.stringify(d.arguments)));
      },
      tool_result: function (d) {
        settle();  // the model's next words go to a new message
        var tool = bubble(list, "tool");  // labelled as the stored transcript labels it
        tool.appendChild(el("div", "content", d.success ? d.result : d.error_message));
      },
      done: finish,
      error: function (d) { fail(d.error.message); }
    };

    fetch(streamUrl, { method: "POST", body: data, credentials: "same-origin" })
      .then(function (response) {
        var type = response.headers.get("Content-Type") || "";
        if (type.indexOf("application/json") === 0) {
          // refused before the turn began: the page we are sent to shows why
          return response.json().then(function (body) {
            window.location.assign(body.redirect || window.location.href);
          });
        }
        if (response.redirected) {
          window.location.assign(response.url);  // the login page: the login has expired
          return;
        }
        if (type.indexOf("text/event-stream") !== 0) {
          fail("the console could not take the message (HTTP " + response.status +
               "): reload the page and send it again");
          return;
        }
        var reader = response.body.getReader();
        var decoder = new TextDecoder();
        var buffer = "";
        function pump() {
          return reader.read().then(function (chunk) {
            if (chunk.done) {
              if (!over) fail("the connection ended before the answer was complete");
              return;
            }
            buffer += decoder.decode(chunk.value, { stream: true });
            var at;
            while ((at = buffer.indexOf("\n\n")) >= 0) {
              var name = null, payload = null;
              buffer.slice(0, at).split("\n").forEach(function (line) {
                if (line.indexOf("event: ") === 0) name = line.slice(7);
                else if (line.indexOf("data: ") === 0) payload = line.slice(6);
              });
              buffer = buffer.slice(at + 2);
              if (name && on[name]) on[name](payload ? JSON.parse(payload) : {});
            }
            return pump();
          });
        }
        return pump();
      })
      .catch(function (err) { fail("the request failed: " + err); });
  });
})();
