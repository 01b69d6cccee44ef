// The language switcher (docs/_templates/version-switcher.html) links to this page in every
// edition. Served over http, a choice first checks with a HEAD request that the page exists
// there and otherwise goes to that edition's home page, as the pydata theme's switcher does.
// Opened from disk (file://) there is nothing to ask: the link is followed as it is.
document.addEventListener("click", async (event) => {
  const link = event.target.closest(".version-switcher__menu a[data-version]");
  if (!link || !window.location.protocol.startsWith("http")) {
    return;
  }
  event.preventDefault();
  const target = link.href;
  const page = `${DOCUMENTATION_OPTIONS.pagename}.html`;
  const home = target.endsWith(page) ? target.slice(0, -page.length) + "index.html" : target;
  try {
    const head = await fetch(target, { method: "HEAD" });
    window.location.href = head.ok ? target : home;
  } catch (err) {
    window.location.href = home;
  }
});
