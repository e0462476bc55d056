//! The book as a reader sees it: built by mdBook, served on 127.0.0.1 and loaded, chapter by
//! chapter, in headless Chromium. In every chapter each inline SVG chart and diagram must be
//! drawn with a non-zero size, nothing may log an error or fail to load, and no request may go to
//! another host; the same holds for the print version, which has every chapter on one page;
//! mdBook's search must find a kernel by name; two chapters are saved as screenshots in
//! `target/browser/`. No GPU is needed.
//!
//! How: the test's own server serves the built book and puts one `<script>` (`CHECK_JS`) at the
//! top of every page it sends. That script records errors from the moment the page starts,
//! measures the page once it has loaded and drawn, posts what it saw back to the server, and the
//! server answers with the next page to load. One Chromium process walks the whole book this way.
//! Chromium resolves no name but 127.0.0.1, so a request meant for another host fails instead of
//! leaving the machine; the page's own resource list shows it.
//!
//! Where Chromium or mdbook is missing every trial is `ignored`, with the reason;
//! `REQUIRE_BROWSER=1` (set by `.ci/run`) makes that a failure. `CHROMIUM=/path` picks the browser.

use libtest_mimic::{Arguments, Completion, Failed, Trial};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The kernel name the search must find, and the chapter it must lead to.
const SEARCH: (&str, &str) = ("reduce7", "07_multiple_elements.html");
/// The chapters saved as screenshots, each from its top: (page, window height). The first shows
/// a diagram, the second the first charts.
const SCREENSHOTS: [(&str, u32); 2] = [("01_interleaved_divergent.html", 1600), ("benchmark.html", 2800)];
const WIDTH: u32 = 1280;
/// The whole walk through the book must finish within this.
const DEADLINE: Duration = Duration::from_secs(60);

fn root() -> PathBuf {
    // The manifest dir when it holds the book, else the working directory (the GPU bundle).
    reduction::records::repo_root()
}

/// `target/browser/`: the built book, the screenshots and Chromium's log.
fn out_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root().join("target"));
    let target = if target.is_absolute() { target } else { root().join(target) };
    target.join("browser")
}

fn required() -> bool {
    std::env::var("REQUIRE_BROWSER").is_ok_and(|v| v == "1")
}

/// Every chapter in SUMMARY.md, as its markdown file name, in reading order.
fn chapters() -> Vec<String> {
    let summary = std::fs::read_to_string(root().join("book/SUMMARY.md")).expect("book/SUMMARY.md");
    summary.split("](").skip(1).map(|rest| rest.split(')').next().unwrap().to_string()).filter(|l| l.ends_with(".md")).collect()
}

fn html_name(chapter: &str) -> String {
    chapter.trim_end_matches(".md").to_string() + ".html"
}

/// How many SVGs a chapter puts on the page: each `{{#include ….svg}}` and each literal `<svg`,
/// following included markdown (the generated tables) too.
fn expected_svgs(md: &Path) -> usize {
    let Ok(text) = std::fs::read_to_string(md) else { return 0 };
    let mut count = 0;
    let mut rest = text.as_str();
    while let Some(start) = rest.find("{{#include ") {
        let after = &rest[start + "{{#include ".len()..];
        let end = after.find("}}").unwrap_or(after.len());
        let path = after[..end].trim().split(':').next().unwrap_or("");
        if path.ends_with(".svg") {
            count += 1;
        } else if path.ends_with(".md") {
            count += expected_svgs(&md.parent().unwrap().join(path));
        }
        rest = &after[end..];
    }
    count + text.matches("<svg").count()
}

// ---------------------------------------------------------------------------------------------
// What the page itself reports.

/// Injected as the first element of every page's `<head>`. It posts lines such as
/// `svg 0 736.0 420.0 700.0 400.0 visible 512 Time per sum` and `problem console.error: …`.
const CHECK_JS: &str = r#"
(() => {
  const page = location.pathname + location.search;
  const problems = [], warnings = [];
  const flat = s => String(s).replace(/\s+/g, ' ').slice(0, 300);
  addEventListener('error', e => {
    const t = e.target;
    if (t && t !== window && t.nodeType === 1) {
      const url = t.src || (t.href && (t.href.baseVal || t.href)) || '';
      problems.push('failed to load <' + t.tagName.toLowerCase() + '> ' + url);
    } else {
      problems.push('uncaught error: ' + e.message + ' (' + e.filename + ':' + e.lineno + ')');
    }
  }, true);
  addEventListener('unhandledrejection', e => problems.push('unhandled rejection: ' + ((e.reason && e.reason.stack) || e.reason)));
  addEventListener('securitypolicyviolation', e => problems.push('blocked: ' + e.blockedURI));
  for (const [level, into] of [['error', problems], ['warn', warnings]]) {
    const original = console[level];
    console[level] = function (...args) {
      into.push('console.' + level + ': ' + args.map(String).join(' '));
      return original.apply(this, args);
    };
  }
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  const drawn = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  async function measure() {
    await document.fonts.ready;
    await drawn();
    await sleep(50);
    const out = [];
    if (new URLSearchParams(location.search).has('search')) {
      for (let i = 0; i < 100 && !document.querySelector('#mdbook-searchresults li a'); i++) await sleep(50);
      for (const a of document.querySelectorAll('#mdbook-searchresults li a')) out.push('result ' + flat(a.getAttribute('href')));
    }
    const main = document.querySelector('main');
    if (!main) problems.push('the page has no <main>');
    const svgs = main ? [...main.querySelectorAll('svg')].filter(s => !s.parentElement.closest('svg')) : [];
    svgs.forEach((svg, i) => {
      const box = svg.getBoundingClientRect();
      let content = { width: 0, height: 0 };
      try { content = svg.getBBox(); } catch (e) {}
      const style = getComputedStyle(svg);
      const visible = style.display !== 'none' && style.visibility !== 'hidden' && Number(style.opacity) > 0;
      const label = (svg.querySelector('title, text') || {}).textContent || svg.id || '';
      out.push(['svg', i, box.width.toFixed(1), box.height.toFixed(1), content.width.toFixed(1), content.height.toFixed(1),
                visible ? 'visible' : 'hidden', svg.querySelectorAll('*').length, flat(label)].join(' '));
    });
    for (const img of main ? main.querySelectorAll('img') : []) out.push(['img', img.naturalWidth, img.naturalHeight, img.src].join(' '));
    for (const r of performance.getEntriesByType('resource')) out.push('request ' + (r.responseStatus || 0) + ' ' + r.name);
    for (const p of problems) out.push('problem ' + flat(p));
    for (const w of warnings) out.push('warning ' + flat(w));
    return out;
  }
  async function report(lines) {
    const answer = await fetch('/__report?page=' + encodeURIComponent(page), { method: 'POST', body: lines.join('\n') });
    const next = await answer.text();
    if (next) location.replace(next);
  }
  addEventListener('load', () => measure().catch(e => ['problem the check itself failed: ' + flat(e)]).then(report));
})();
"#;

#[derive(Debug)]
struct Svg {
    width: f64,
    height: f64,
    content_width: f64,
    content_height: f64,
    visible: bool,
    elements: usize,
    label: String,
}

#[derive(Debug, Default)]
struct Report {
    svgs: Vec<Svg>,
    /// (natural width, natural height, url)
    images: Vec<(u32, u32, String)>,
    /// (HTTP status, 0 where the request failed; url)
    requests: Vec<(u16, String)>,
    problems: Vec<String>,
    warnings: Vec<String>,
    search_results: Vec<String>,
}

fn parse_report(body: &str) -> Report {
    let mut report = Report::default();
    for line in body.lines() {
        let (kind, rest) = line.split_once(' ').unwrap_or((line, ""));
        match kind {
            "svg" => {
                let f: Vec<&str> = rest.splitn(8, ' ').collect();
                let num = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
                report.svgs.push(Svg {
                    width: num(1),
                    height: num(2),
                    content_width: num(3),
                    content_height: num(4),
                    visible: f.get(5) == Some(&"visible"),
                    elements: num(6) as usize,
                    label: f.get(7).unwrap_or(&"").to_string(),
                });
            }
            "img" => {
                let f: Vec<&str> = rest.splitn(3, ' ').collect();
                let num = |i: usize| f.get(i).and_then(|v| v.parse().ok()).unwrap_or(0);
                report.images.push((num(0), num(1), f.get(2).unwrap_or(&"").to_string()));
            }
            "request" => {
                let (status, url) = rest.split_once(' ').unwrap_or(("0", rest));
                report.requests.push((status.parse().unwrap_or(0), url.to_string()));
            }
            "problem" => report.problems.push(rest.to_string()),
            "warning" => report.warnings.push(rest.to_string()),
            "result" => report.search_results.push(rest.to_string()),
            _ => report.problems.push(format!("unreadable report line: {line}")),
        }
    }
    report
}

// ---------------------------------------------------------------------------------------------
// The server: the built book on 127.0.0.1, with the check injected into every page.

#[derive(Default)]
struct Walk {
    /// The pages to visit, in order (paths with their query).
    pages: Vec<String>,
    /// What each visited page reported.
    reports: BTreeMap<String, String>,
    /// Paths the server was asked for and does not have.
    missing: Vec<String>,
    served: usize,
}

struct Server {
    base: String,
    walk: Arc<(Mutex<Walk>, Condvar)>,
}

impl Server {
    fn start(site: PathBuf, pages: Vec<String>) -> std::io::Result<Server> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let base = format!("http://{}", listener.local_addr()?);
        let walk = Arc::new((Mutex::new(Walk { pages, ..Walk::default() }), Condvar::new()));
        let shared = walk.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (site, walk) = (site.clone(), shared.clone());
                std::thread::spawn(move || {
                    let _ = serve(stream, &site, &walk);
                });
            }
        });
        Ok(Server { base, walk })
    }

    /// Wait until every page has reported, Chromium has gone, or the deadline has passed.
    fn wait(&self, browser: &mut Child, deadline: Instant) -> Result<(), String> {
        let (lock, changed) = &*self.walk;
        let mut walk = lock.lock().unwrap();
        loop {
            if walk.reports.len() >= walk.pages.len() {
                return Ok(());
            }
            if let Ok(Some(status)) = browser.try_wait() {
                return Err(format!("Chromium exited ({status}) before every page reported"));
            }
            if Instant::now() >= deadline {
                return Err(format!("only {} of {} pages reported within {DEADLINE:?}", walk.reports.len(), walk.pages.len()));
            }
            walk = changed.wait_timeout(walk, Duration::from_millis(200)).unwrap().0;
        }
    }
}

fn serve(stream: TcpStream, site: &Path, walk: &(Mutex<Walk>, Condvar)) -> std::io::Result<()> {
    // Chromium opens connections it may never use; do not wait on them forever.
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line)? == 0 {
        return Ok(());
    }
    let mut length = 0;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let mut parts = request_line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or("/"));
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let path = percent_decode(path);

    let (status, kind, content) = if method == "POST" && path == "/__report" {
        let page = query.strip_prefix("page=").map(percent_decode).unwrap_or_default();
        let (lock, changed) = walk;
        let mut walk = lock.lock().unwrap();
        walk.reports.insert(page, String::from_utf8_lossy(&body).into_owned());
        let next = walk.pages.iter().find(|p| !walk.reports.contains_key(*p)).cloned().unwrap_or_default();
        changed.notify_all();
        ("200 OK", "text/plain", next.into_bytes())
    } else {
        let relative = path.trim_start_matches('/');
        let mut file = site.join(relative);
        if relative.is_empty() || file.is_dir() {
            file = file.join("index.html");
        }
        match std::fs::read(&file) {
            Ok(bytes) if !relative.split('/').any(|part| part == "..") => {
                walk.0.lock().unwrap().served += 1;
                let kind = content_type(&file);
                // `?plain` (the screenshots) leaves the page as mdBook wrote it.
                let bytes = if kind.starts_with("text/html") && !query.split('&').any(|q| q == "plain") { inject(&bytes) } else { bytes };
                ("200 OK", kind, bytes)
            }
            _ => {
                walk.0.lock().unwrap().missing.push(path.clone());
                ("404 Not Found", "text/plain", b"not found".to_vec())
            }
        }
    };
    let mut stream = stream;
    // The theme's scripts, styles and fonts are the same on every page: let the browser keep them.
    let cache = if kind.starts_with("text/html") || kind == "text/plain" { "no-store" } else { "max-age=3600" };
    write!(stream, "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: {cache}\r\nConnection: close\r\n\r\n", content.len())?;
    if method != "HEAD" {
        stream.write_all(&content)?;
    }
    stream.flush()
}

fn inject(html: &[u8]) -> Vec<u8> {
    let html = String::from_utf8_lossy(html);
    let script = format!("<script>{CHECK_JS}</script>");
    match html.find("<head>") {
        Some(at) => format!("{}{script}{}", &html[..at + "<head>".len()], &html[at + "<head>".len()..]).into_bytes(),
        None => format!("{script}{html}").into_bytes(),
    }
}

fn content_type(file: &Path) -> &'static str {
    match file.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "json" => "application/json",
        "woff2" => "font/woff2",
        "woff" => "font/woff",
        "ttf" => "font/ttf",
        "ico" => "image/x-icon",
        _ => "application/octet-stream",
    }
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Some(b) = std::str::from_utf8(&bytes[i + 1..i + 3]).ok().and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

// ---------------------------------------------------------------------------------------------
// Chromium.

fn find_chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let dirs: Vec<PathBuf> = std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"]
        .iter()
        .flat_map(|name| dirs.iter().map(move |dir| dir.join(name)))
        .find(|path| path.is_file())
}

/// Headless, with a fresh profile, and no way off the machine: every host name but 127.0.0.1
/// fails to resolve, no proxy is used, and the browser's own background traffic is off.
fn headless(binary: &Path, profile: &Path, height: u32) -> Command {
    let mut command = Command::new(binary);
    command
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--mute-audio"])
        .args(["--no-first-run", "--no-default-browser-check", "--disable-background-networking"])
        .args(["--disable-component-update", "--disable-sync", "--disable-extensions", "--disable-default-apps"])
        .args(["--no-proxy-server", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--window-size={WIDTH},{height}"))
        .stdin(Stdio::null())
        // Its own process group, so that it and its helpers can be ended together.
        .process_group(0);
    command
}

/// End a Chromium started by this test: its process group, politely, then for certain.
fn stop(mut browser: Child) {
    let group = format!("-{}", browser.id());
    let _ = Command::new("kill").args(["-TERM", "--", &group]).stderr(Stdio::null()).status();
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        if let Ok(Some(_)) = browser.try_wait() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = Command::new("kill").args(["-KILL", "--", &group]).stderr(Stdio::null()).status();
    let _ = browser.wait();
}

// ---------------------------------------------------------------------------------------------
// One walk through the whole book, shared by every trial.

enum Setup {
    /// Chromium or mdbook is not installed: the trials are ignored (failed under REQUIRE_BROWSER=1).
    Absent(String),
    /// They are there, but building, serving or walking the book failed.
    Broken(String),
}

struct Session {
    site: PathBuf,
    server: Server,
    chromium: PathBuf,
    reports: BTreeMap<String, Report>,
    /// Set when the walk did not finish: every page that did not report fails with it.
    unfinished: Option<String>,
}

static SESSION: OnceLock<Result<Session, Setup>> = OnceLock::new();

fn session() -> &'static Result<Session, Setup> {
    SESSION.get_or_init(|| {
        let started = Instant::now();
        let Some(chromium) = find_chromium() else {
            return Err(Setup::Absent("Chromium is not on PATH (apt-get install chromium, or set CHROMIUM=/path)".into()));
        };
        if Command::new("mdbook").arg("--version").output().is_err() {
            return Err(Setup::Absent("`mdbook` is not on PATH (cargo install mdbook --version 0.5.4 --locked)".into()));
        }
        let out = out_dir();
        let site = out.join("book");
        let _ = std::fs::remove_dir_all(&site);
        std::fs::create_dir_all(&out).map_err(|e| Setup::Broken(format!("cannot create {}: {e}", out.display())))?;
        let build = Command::new("mdbook").arg("build").arg("--dest-dir").arg(&site).arg(root()).output();
        match build {
            Ok(o) if o.status.success() => {}
            Ok(o) => return Err(Setup::Broken(format!("mdbook build failed:\n{}", String::from_utf8_lossy(&o.stderr)))),
            Err(e) => return Err(Setup::Broken(format!("cannot run mdbook: {e}"))),
        }
        let built = started.elapsed();

        let mut pages: Vec<String> = chapters().iter().map(|c| format!("/{}", html_name(c))).collect();
        pages.push("/print.html".into());
        pages.push(search_page());
        let server = Server::start(site.clone(), pages.clone()).map_err(|e| Setup::Broken(format!("cannot serve the book on 127.0.0.1: {e}")))?;
        let profile = out.join("profile");
        let _ = std::fs::remove_dir_all(&profile);
        let log = std::fs::File::create(out.join("chromium.log")).map_err(|e| Setup::Broken(e.to_string()))?;
        let mut browser = headless(&chromium, &profile, 1600)
            .args(["--enable-logging=stderr", "--v=0"])
            .arg(format!("{}{}", server.base, pages[0]))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| Setup::Broken(format!("cannot start {}: {e}", chromium.display())))?;
        let unfinished = server.wait(&mut browser, Instant::now() + DEADLINE).err();
        stop(browser);
        let _ = std::fs::remove_dir_all(&profile);

        let walk = server.walk.0.lock().unwrap();
        let reports: BTreeMap<String, Report> = walk.reports.iter().map(|(page, body)| (page.clone(), parse_report(body))).collect();
        eprintln!(
            "browser: built the book into {} in {:.1?}; Chromium walked {} of {} pages in {:.1?}, {} SVGs on them ({} files served); its log: {}",
            site.display(),
            built,
            walk.reports.len(),
            walk.pages.len(),
            started.elapsed() - built,
            reports.values().map(|r| r.svgs.len()).sum::<usize>(),
            walk.served,
            out.join("chromium.log").display()
        );
        drop(walk);
        Ok(Session { site, server, chromium, reports, unfinished })
    })
}

fn search_page() -> String {
    format!("/introduction.html?search={}", SEARCH.0)
}

fn browser_trial(name: impl Into<String>, body: impl FnOnce(&'static Session) -> Result<(), Failed> + Send + 'static) -> Trial {
    Trial::ignorable_test(name, move || match session() {
        Ok(session) => body(session).map(|()| Completion::Completed),
        Err(Setup::Absent(why)) if required() => Err(format!("REQUIRE_BROWSER=1 but {why}").into()),
        Err(Setup::Absent(why)) => Ok(Completion::ignored_with(why.clone())),
        Err(Setup::Broken(why)) => Err(why.clone().into()),
    })
}

impl Session {
    fn report(&self, page: &str) -> Result<&Report, Failed> {
        self.reports.get(page).ok_or_else(|| {
            let why = self.unfinished.as_deref().unwrap_or("the walk ended without it");
            format!("{page} never reported what it showed: {why} (see {})", out_dir().join("chromium.log").display()).into()
        })
    }
}

/// What is wrong with a page as the browser showed it: errors, failed or outside requests.
fn page_problems(report: &Report, base: &str) -> Vec<String> {
    let mut problems = report.problems.clone();
    for (status, url) in &report.requests {
        if !url.starts_with(&format!("{base}/")) {
            problems.push(format!("requested {url}, which is not on this machine"));
        } else if *status == 0 || *status >= 400 {
            problems.push(format!("requested {url}: {}", if *status == 0 { "failed".to_string() } else { format!("HTTP {status}") }));
        }
    }
    problems
}

fn check_chapter(session: &Session, chapter: &str) -> Result<(), Failed> {
    check_page(session, &format!("/{}", html_name(chapter)), expected_svgs(&root().join("book").join(chapter)))
}

/// The print version: every chapter on one page, so every chart and diagram at once.
fn check_print(session: &Session) -> Result<(), Failed> {
    let expected = chapters().iter().map(|c| expected_svgs(&root().join("book").join(c))).sum();
    check_page(session, "/print.html", expected)
}

fn check_page(session: &Session, page: &str, expected: usize) -> Result<(), Failed> {
    let report = session.report(page)?;
    let mut problems = page_problems(report, &session.server.base);
    if report.svgs.len() != expected {
        problems.push(format!("the markdown puts {expected} SVG(s) on this page; the browser found {}", report.svgs.len()));
    }
    for (i, svg) in report.svgs.iter().enumerate() {
        let drawn = svg.visible && svg.width >= 1.0 && svg.height >= 1.0 && svg.content_width >= 1.0 && svg.content_height >= 1.0 && svg.elements > 1;
        if !drawn {
            problems.push(format!("SVG {i} (\"{}\") is not drawn: {svg:?}", svg.label));
        }
    }
    for (w, h, url) in &report.images {
        if *w == 0 || *h == 0 {
            problems.push(format!("image {url} has no size ({w}x{h})"));
        }
    }
    for warning in &report.warnings {
        eprintln!("{page}: {warning}");
    }
    if problems.is_empty() { Ok(()) } else { Err(format!("{page}:\n  {}", problems.join("\n  ")).into()) }
}

fn check_search(session: &Session) -> Result<(), Failed> {
    let page = search_page();
    let report = session.report(&page)?;
    let mut problems = page_problems(report, &session.server.base);
    if !report.search_results.iter().any(|href| href.split(['#', '?']).next() == Some(SEARCH.1)) {
        problems.push(format!("searching for {:?} did not lead to {}; results: {:?}", SEARCH.0, SEARCH.1, report.search_results));
    }
    if problems.is_empty() { Ok(()) } else { Err(format!("{page}:\n  {}", problems.join("\n  ")).into()) }
}

/// Nothing the browser loaded came from another host, nothing it asked for was missing, and no
/// page of the built book names another host in anything it loads (script, stylesheet, image,
/// frame, CSS `url()`/`@import`) — the last catches what a page might load later.
fn check_local(session: &Session) -> Result<(), Failed> {
    let base = &session.server.base;
    // Each outside URL once, with the pages that asked for it.
    let mut outside: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut local = 0;
    for (page, report) in &session.reports {
        for (_, url) in &report.requests {
            if url.starts_with(&format!("{base}/")) {
                local += 1;
            } else {
                outside.entry(format!("the browser requested {url}")).or_default().push(page.trim_start_matches('/').to_string());
            }
        }
    }
    for path in &session.server.walk.0.lock().unwrap().missing {
        outside.entry(format!("the browser asked for {path}, which the built book does not have")).or_default();
    }
    for file in files(&session.site) {
        let kind = file.extension().and_then(|e| e.to_str()).unwrap_or("");
        if kind != "html" && kind != "css" {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        for url in external_loads(&text) {
            let name = file.strip_prefix(&session.site).unwrap_or(&file).display().to_string();
            outside.entry(format!("the built book loads {url}")).or_default().push(name);
        }
    }
    let mut problems: Vec<String> = outside
        .into_iter()
        .map(|(what, mut pages)| {
            pages.sort();
            pages.dedup();
            match pages.len() {
                0 => what,
                1..=3 => format!("{what} ({})", pages.join(", ")),
                n => format!("{what} ({}, … {n} files)", pages[..3].join(", ")),
            }
        })
        .collect();
    if session.reports.is_empty() {
        problems.push("no page reported, so nothing was seen".into());
    }
    if problems.is_empty() {
        eprintln!("browser: {local} requests, all to {base}");
        Ok(())
    } else {
        Err(format!("requests that would leave the machine, or fail:\n  {}", problems.join("\n  ")).into())
    }
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() { out.extend(files(&path)) } else { out.push(path) }
    }
    out
}

/// URLs on other hosts that an HTML or CSS text loads: the `src` of any element, the `href` of
/// a `<link>`, and CSS `url(…)` and `@import`. Links a reader follows (`<a href>`) are not loads.
fn external_loads(text: &str) -> Vec<String> {
    let is_external = |url: &str| {
        let url = url.trim_matches(|c| c == '"' || c == '\'' || c == ' ');
        let rest = url.strip_prefix("https:").or_else(|| url.strip_prefix("http:")).unwrap_or(url);
        rest.starts_with("//") && !rest.starts_with("//127.0.0.1") && !rest.starts_with("//localhost")
    };
    let mut found = Vec::new();
    for (i, _) in text.match_indices('<') {
        let tag_text = &text[i + 1..];
        let end = tag_text.find('>').unwrap_or(tag_text.len());
        let tag_text = &tag_text[..end];
        let name: String = tag_text.chars().take_while(|c| c.is_ascii_alphanumeric()).collect::<String>().to_ascii_lowercase();
        if name.is_empty() {
            continue;
        }
        let mut attributes = vec![" src="];
        if name == "link" {
            attributes.push(" href=");
        }
        for attribute in attributes {
            if let Some(at) = tag_text.to_ascii_lowercase().find(attribute) {
                let value = tag_text[at + attribute.len()..].split_whitespace().next().unwrap_or("");
                if is_external(value) {
                    found.push(value.trim_matches(|c| c == '"' || c == '\'').to_string());
                }
            }
        }
    }
    for marker in ["url(", "@import "] {
        for (i, _) in text.match_indices(marker) {
            let value: String = text[i + marker.len()..].chars().take_while(|c| *c != ')' && *c != ';').collect();
            if is_external(&value) {
                found.push(value);
            }
        }
    }
    found
}

/// Two chapters as a reader sees them, as PNG files in `target/browser/`.
fn screenshots(session: &Session) -> Result<(), Failed> {
    let mut saved = Vec::new();
    for (page, height) in SCREENSHOTS {
        let name = page.trim_end_matches(".html").to_string() + ".png";
        let file = out_dir().join(&name);
        let _ = std::fs::remove_file(&file);
        let profile = out_dir().join(format!("profile-{name}"));
        let mut browser = headless(&session.chromium, &profile, height)
            .arg(format!("--screenshot={}", file.display()))
            .arg("--virtual-time-budget=5000")
            .arg(format!("{}/{page}?plain", session.server.base))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let until = Instant::now() + Duration::from_secs(30);
        while browser.try_wait()?.is_none() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(100));
        }
        stop(browser);
        let _ = std::fs::remove_dir_all(&profile);
        let png = std::fs::read(&file).map_err(|e| format!("no screenshot of {page} at {}: {e}", file.display()))?;
        // A PNG's IHDR holds its width and height at bytes 16..24.
        let size = |at: usize| png.get(at..at + 4).map(|b| u32::from_be_bytes(b.try_into().unwrap()));
        if !png.starts_with(b"\x89PNG\r\n\x1a\n") || size(16) != Some(WIDTH) || size(20) != Some(height) {
            return Err(format!("{} is not a {WIDTH}x{height} PNG", file.display()).into());
        }
        saved.push(file.display().to_string());
    }
    eprintln!("browser: screenshots in {}", saved.join(", "));
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let mut trials: Vec<Trial> = chapters()
        .into_iter()
        .map(|chapter| {
            let name = format!("renders::{}", html_name(&chapter));
            browser_trial(name, move |session| check_chapter(session, &chapter))
        })
        .collect();
    trials.push(browser_trial("renders::print.html", check_print));
    trials.push(browser_trial(format!("search::finds_{}", SEARCH.0), check_search));
    trials.push(browser_trial("no_request_leaves_the_machine", check_local));
    trials.push(browser_trial("screenshots::two_chapters", screenshots));
    libtest_mimic::run(&args, trials).exit()
}
