// "Copy link" buttons: copy the named input's value to the clipboard and say so.
for (const button of document.querySelectorAll("button[data-copy]")) {
  button.addEventListener("click", async () => {
    const input = document.getElementById(button.dataset.copy);
    await navigator.clipboard.writeText(input.value);
    button.textContent = "Copied";
  });
}
