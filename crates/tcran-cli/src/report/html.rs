//! The page around the plots: escaping, style sheet and the two small
//! scripts (an error catcher that shows script errors on the page, and a
//! status line counting the plots the browser drew). The page loads
//! nothing from anywhere: styles, scripts and SVG are inline.

/// Escapes text for HTML element content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

pub const STYLE: &str = r#"
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0 auto; max-width: 1180px; padding: 0 16px 40px; color: #222; }
h1 { font-size: 1.5em; margin-top: 1em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; } h3 { margin-top: 1.4em; }
table { border-collapse: collapse; font-size: 0.9em; margin: 0.6em 0; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; }
td { white-space: nowrap; } td.wrap { white-space: normal; min-width: 12em; } .table-scroll { overflow-x: auto; }
th { background: #f4f4f4; } td.name, th.name { text-align: left; }
figure.plot { margin: 1em 0; } .plot-svg, .pipeline-svg { max-width: 100%; height: auto; display: block; }
ul.legend { list-style: none; padding: 0; margin: 4px 0 0 64px; font-size: 0.85em; }
ul.legend li { display: inline-block; margin-right: 14px; } .swatch { font-weight: bold; margin-right: 4px; }
figcaption { font-size: 0.85em; color: #555; margin-left: 64px; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(520px, 1fr)); gap: 0 16px; }
.pipelines { overflow-x: auto; } nav a { margin-right: 12px; }
#script-errors { color: #b00; white-space: pre-wrap; } .note { color: #555; font-size: 0.9em; }
"#;

/// First script of the page: any later script error is written into the
/// page (`#script-errors`) so that it is seen, and tests can check it.
pub const ERROR_CATCHER: &str = r#"window.addEventListener('error', function (e) {
  var el = document.getElementById('script-errors');
  if (el) { el.hidden = false; el.textContent += (e.message || 'script error') + '\n'; }
});"#;

/// Last script: counts the plots the browser laid out.
pub const STATUS: &str = r#"(function () {
  var figs = document.querySelectorAll('figure.plot');
  var drawn = 0;
  for (var i = 0; i < figs.length; i++) {
    var s = figs[i].querySelector('svg');
    if (s && s.getBoundingClientRect().width > 0) { drawn++; }
  }
  document.getElementById('report-status').textContent = drawn + ' of ' + figs.length + ' plots drawn';
})();"#;

#[cfg(test)]
mod tests {
    #[test]
    fn escaping_covers_markup_and_quotes() {
        assert_eq!(
            super::escape(r#"<a href="x">&'"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
