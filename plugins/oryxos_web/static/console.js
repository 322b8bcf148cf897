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
