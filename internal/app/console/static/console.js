// Linoone console: the only script. Copy buttons put a short URL on the clipboard;
// forms marked data-confirm ask first. Everything else works without it.
document.addEventListener('click', async (e) => {
  const b = e.target.closest('button.copy');
  if (!b) return;
  const status = b.parentElement.querySelector('.copied');
  try {
    await navigator.clipboard.writeText(b.dataset.copy);
    if (status) status.textContent = 'Copied';
  } catch (err) {
    if (status) status.textContent = 'Copy failed: select the link and copy it';
  }
});
document.addEventListener('submit', (e) => {
  const msg = e.target.dataset.confirm;
  if (msg && !window.confirm(msg)) e.preventDefault();
});
