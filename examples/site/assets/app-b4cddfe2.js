// Gatehouse example app: asks the server how it serves this page's own assets.
const button = document.getElementById('inspect');
const output = document.getElementById('headers');
const year = document.getElementById('year');
if (year) year.textContent = String(new Date().getFullYear());

function assetUrls() {
  const urls = new Set([location.pathname]);
  for (const el of document.querySelectorAll('link[href], script[src], img[src]')) {
    const url = new URL(el.getAttribute('href') ?? el.getAttribute('src'), location.href);
    if (url.origin === location.origin) urls.add(url.pathname);
  }
  return [...urls];
}

function cell(row, text) {
  const td = document.createElement('td');
  td.textContent = text ?? '-';
  row.append(td);
}

async function inspect() {
  button.disabled = true;
  output.replaceChildren();
  try {
    for (const path of assetUrls()) {
      const res = await fetch(path, { method: 'HEAD', cache: 'no-store' });
      const row = document.createElement('tr');
      cell(row, path);
      cell(row, String(res.status));
      cell(row, res.headers.get('content-type'));
      cell(row, res.headers.get('content-encoding') ?? 'identity');
      cell(row, res.headers.get('cache-control'));
      cell(row, res.headers.get('etag'));
      output.append(row);
    }
  } catch (err) {
    const row = document.createElement('tr');
    cell(row, 'request failed: ' + (err instanceof Error ? err.message : String(err)));
    output.append(row);
  } finally {
    button.disabled = false;
  }
}

button?.addEventListener('click', inspect);
