#!/usr/bin/env python3
"""check.py - checks a `wasp report -o X.html` page in headless Chromium.

usage: check.py REPORT.html REPORT.json [JIT.html]

REPORT.json is `wasp report --format json` of the same run: the truth the
page is compared with. Loads the page three times:

1. as written: the top pair's function names are on the page; the table has
   one row per embedded pair; clicking another pair (a real mouse click)
   shows its two contexts side by side with file:line; sorting by a column
   reorders the rows; searching the graph highlights exactly the boxes whose
   label holds the query and reports the matched share; clicking a box zooms.
2. with a hostile function name put into its data: it shows as text, and no
   element, script or dialog comes out of it.
3. with a disassembly blob put into its data (the hook the JVM front end
   will fill): the code panel lists it, highlights the accessing
   instruction, and switches AT&T/Intel.
4. JIT.html, when given: `wasp report` of a profile holding a code blob as
   the JVM front end writes it (tests/e2e/html.sh makes one): the
   disassembly wasp wrote shows both instructions of the pair, source lines
   with the inlined callee named, the rows left out of a long method, and
   scrolls the accessing instruction into view.

Every load must finish with no console error, no uncaught exception and no
network request. Prints what it checked (exit 0) or the first failure
(exit 1).
"""
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402


class Fail(Exception):
    pass


def expect(cond, what):
    if not cond:
        raise Fail(what)


DATA_RE = re.compile(r'(<script type="application/json" id="wasp-data">)(.*?)(</script>)', re.S)


def page_data(html):
    m = DATA_RE.search(html)
    expect(m, "no wasp-data script element in the page")
    expect("<" not in m.group(2), "a raw '<' inside the embedded JSON")
    return json.loads(m.group(2))


def with_data(html, data):
    """The page with other data, embedded the way out_html.c does it."""
    text = json.dumps(data, separators=(",", ":")).replace("<", "\\u003c")
    return DATA_RE.sub(lambda m: m.group(1) + text + m.group(3), html, count=1)


def load(b, path):
    b.navigate("file://" + os.path.abspath(path))
    b.settle()
    expect(b.eval("document.getElementById('fatal').hidden"), "the page says it has no data")


def no_problems(b, when):
    b.settle()
    expect(not b.problems, "%s: %s" % (when, "; ".join(b.problems[:3])))


def leaf(side):
    f = side["frames"][0]
    return f["function"], os.path.basename(f["file"]), f["line"]


def check_budget(report, summary):
    """The overhead budget's rows, from the same accounts as the JSON report."""
    budget = report.get("budget")
    expect(budget is not None, "the JSON report has no budget")
    want = "off" if budget["percent"] == "off" else "%g%%" % budget["percent"]
    expect("budget" in summary and want in summary,
           "the summary does not show the budget (%s)" % want)
    expect("max %.2f%%" % (100 * budget["overhead_max"]) in summary,
           "the summary lacks the estimated overhead max %.2f%%" % (100 * budget["overhead_max"]))
    expect("(thread %d" % budget["overhead_max_tid"] in summary,
           "the summary does not name the thread with the largest overhead, %d" % budget["overhead_max_tid"])
    expect("%.2f%% of all threads" % (100 * budget["overhead_all"]) in summary,
           "the summary lacks the overhead of all threads, %.2f%%" % (100 * budget["overhead_all"]))
    expect("mean interval" in summary, "the summary lacks the effective mean interval")
    life = budget.get("lifecycle_ns") or 0
    expect(life > 0, "the JSON report's budget has no lifecycle_ns (wasp's time in thread starts and ends)")
    expect("thread costs" in summary and "%.1f ms in" % (life / 1e6) in summary,
           "the summary lacks the thread costs, %.1f ms" % (life / 1e6))
    switches = budget.get("switches") or 0
    expect(switches > 0, "the JSON report's budget counts no context switches")
    expect("switch costs" in summary and "in {:,} context switches".format(switches) in summary,
           "the summary lacks the switch costs of %d context switches" % switches)


def check_report(b, report, html_path):
    load(b, html_path)
    text = b.eval("document.body.innerText")
    top = report["pairs"][0]
    for side in ("watch", "trap"):
        expect(leaf(top[side])[0] in text, "top pair's %s function %s not on the page"
               % (side, leaf(top[side])[0]))
    summary = b.eval("document.getElementById('summary').innerText")
    if report.get("sampler") == "exact":
        # Every access watched, nothing sampled: no budget, no interval.
        expect("exact" in summary, "the summary does not say the run was exact")
    else:
        check_budget(report, summary)
    rows = b.eval("document.querySelectorAll('#pairs tbody tr').length")
    expect(rows == len(report["pairs"]), "%d table rows for %d pairs" % (rows, len(report["pairs"])))
    expect("#1 " in b.eval("document.getElementById('detail-title').textContent"),
           "the top pair is not selected on load")

    # Selecting: a real click on the last row shows that pair in both columns
    # (the last with a source file: the exact mode folds its smallest pairs
    # into one whose frames have none).
    n = max(i + 1 for i, p in enumerate(report["pairs"]) if p["watch"]["frames"][0]["file"])
    b.click("#pairs tbody tr:nth-child(%d) td:nth-child(2)" % n)
    title = b.eval("document.getElementById('detail-title').textContent")
    expect(title.startswith("#%d " % n), "after clicking row %d the detail shows %r" % (n, title))
    expect(b.eval("document.querySelector('#pairs tbody tr:nth-child(%d)').classList.contains('sel')"
                  % n), "the clicked row is not marked selected")
    q = report["pairs"][n - 1]
    for side, box in (("watch", "detail-watch"), ("trap", "detail-trap")):
        fn, file, line = leaf(q[side])
        first = b.eval("(() => { const li = document.querySelector('#%s ol.stack li');"
                       " return li ? li.innerText : ''; })()" % box)
        expect(fn in first and "%s:%d" % (file, line) in first,
               "the %s column's leaf frame reads %r, not %s %s:%d" % (side, first, fn, file, line))
        frames = b.eval("document.querySelectorAll('#%s ol.stack li').length" % box)
        expect(frames == len(q[side]["frames"]), "the %s column shows %d frames of %d"
               % (side, frames, len(q[side]["frames"])))
        insn = q[side]["instruction"]
        expect(insn in b.eval("document.querySelector('#%s .code').innerText" % box),
               "the %s code panel lacks the instruction %r" % (side, insn))
    heads = b.eval("[...document.querySelectorAll('.side > h4')].map(h => h.textContent)")
    expect(len(heads) == 2 and heads[0].startswith("watch") and "(trap)" in heads[1],
           "the detail is not two columns watch | trap: %r" % heads)

    # Sorting by bytes, then back by rank.
    b.click("#pairs th[data-key=bytes] button")
    col = b.eval("(() => { const i = [...document.querySelectorAll('#pairs th:not([hidden])')]"
                 ".findIndex(th => th.dataset.key === 'bytes');"
                 " return [...document.querySelectorAll('#pairs tbody tr')].map(r =>"
                 " +r.cells[i].textContent.replace(/,/g, '')); })()")
    expect(col == sorted(col, reverse=True), "sorting by bytes gave %r" % col[:10])

    # Searching the graph for the top pair's wasteful-side function.
    query = leaf(top["watch" if report["mode"] == "dead-store" else "trap"])[0]
    b.type_into("#fl-search", query)
    b.settle()
    found = b.eval("[...document.querySelectorAll('#flame .fr.match')].map(e => e.textContent)")
    expect(found, "searching the graph for %r highlights nothing" % query)
    expect(all(query.lower() in t.lower() for t in found),
           "search for %r highlighted unrelated boxes %r" % (query, found[:5]))
    unmarked = b.eval("[...document.querySelectorAll('#flame .fr:not(.match)')]"
                      ".filter(e => e.textContent.toLowerCase().includes(%s)).length"
                      % json.dumps(query.lower()))
    expect(unmarked == 0, "%d boxes holding %r are not highlighted" % (unmarked, query))
    matched = b.eval("document.getElementById('fl-matched').textContent")
    m = re.search(r"matched ([0-9.]+)%", matched)
    expect(m and float(m.group(1)) > 0, "the matched share reads %r" % matched)

    # Zooming into the searched box: it then spans the whole width.
    b.click("#flame .fr.match")
    width = b.eval("(() => { const e = [...document.querySelectorAll('#flame .fr:not(.anc)')][0];"
                   " return e ? e.style.width + ' ' + e.textContent : ''; })()")
    expect(width.startswith("100%") and query in width, "zooming shows %r first" % width)
    b.eval("document.getElementById('tab-watch').click()")
    expect(b.eval("document.querySelectorAll('#flame .fr').length") > 2, "the watch graph is empty")
    no_problems(b, "report page")
    boxes = "%d box%s" % (len(found), "" if len(found) == 1 else "es")
    return "%d pairs, clicked #%d, %s match %r (%s)" % (rows, n, boxes, query, matched.split(" (")[0])


def check_hostile(b, html, tmp):
    evil = '<img src=x onerror=alert(1)><script>alert(2)</script>&amp;"\u2028'
    data = page_data(html)
    fi = data["contexts"][data["pairs"][0][0]][0][0]
    data["strings"][data["frames"][fi][0]] = evil
    path = os.path.join(tmp, "hostile.html")
    with open(path, "w") as f:
        f.write(with_data(html, data))
    load(b, path)
    cells = b.eval("[...document.querySelectorAll('#pairs tbody tr:first-child td')]"
                   ".map(td => td.textContent)")
    expect(any(evil in c for c in cells), "the hostile name is not shown as text: %r" % cells)
    expect(b.eval("document.querySelectorAll('img').length") == 0, "the name made an <img>")
    expect(b.eval("document.scripts.length") == 2, "the name made a <script>")
    no_problems(b, "hostile page")


def check_code_hook(b, html, tmp):
    data = page_data(html)
    wi, ti = data["pairs"][0][0], data["pairs"][0][1]
    data["code"] = [{"name": "Demo.kernel(long[])", "file": "Demo.java", "insns": [
        ["0x7f0000001000", 10, "push %rbp", "push rbp"],
        ["0x7f0000001004", 11, "mov %rax,0x10(%rsi)", "mov qword ptr [rsi+0x10], rax"],
        ["0x7f0000001008", 11, "add $0x1,%rax", "add rax, 0x1"],
        ["0x7f000000100c", 12, "mov %rax,0x18(%rsi)", "mov qword ptr [rsi+0x18], rax"]]}]
    data["contexts"][ti][2:] = [0, "0x7f000000100c"]
    data["contexts"][wi][2:] = [0, "0x7f0000001004"]     # wins when C1 is C2
    path = os.path.join(tmp, "code.html")
    with open(path, "w") as f:
        f.write(with_data(html, data))
    load(b, path)
    hit = b.eval("document.querySelector('#detail-watch .code .row.hit').textContent")
    expect("mov %rax,0x10(%rsi)" in hit, "the watch instruction is not highlighted: %r" % hit)
    if wi != ti:
        other = b.eval("(document.querySelector('#detail-watch .code .row.other') || {}).textContent")
        expect(other and "0x18(%rsi)" in other, "the trap instruction is not marked: %r" % other)
    src = b.eval("[...document.querySelectorAll('#detail-watch .code .row.src')].map(e => e.textContent)")
    expect(src == ["Demo.java:10", "Demo.java:11", "Demo.java:12"], "source lines %r" % src)
    b.click("#detail-watch .code button:nth-of-type(2)")
    hit = b.eval("document.querySelector('#detail-watch .code .row.hit').textContent")
    expect("qword ptr [rsi+0x10]" in hit, "Intel syntax did not switch: %r" % hit)
    no_problems(b, "code-hook page")


def check_jit(b, path):
    load(b, path)
    panel = "#detail-watch .code"
    hit = b.eval("document.querySelector('%s .row.hit').textContent" % panel)
    expect(hit == "0x7f00000019c8  mov %rax, 0x10(%rsi)", "the watch instruction reads %r" % hit)
    other = b.eval("(document.querySelector('%s .row.other') || {}).textContent" % panel)
    expect(other == "0x7f00000019d0  mov %rax, 0x18(%rsi)", "the trap instruction reads %r" % other)
    rows = b.eval("[...document.querySelectorAll('%s .row')].map(e => e.className + '|' + e.textContent)"
                  % panel)
    src = [r.split("|", 1)[1] for r in rows if r.startswith("row src")]
    expect(src == ["Demo.java:9", "Demo.java:10", "Demo.java:11", "Demo.<init> (Bump.java:40)",
                   "Demo.java:12"],
           "source rows %r" % src)
    gaps = [r.split("|", 1)[1] for r in rows if r.startswith("row gap")]
    expect(gaps == ["\u2026 2,402 instructions not shown"], "rows left out %r" % gaps)
    shown = b.eval("(() => { const pre = document.querySelector('%s pre'),"
                   " hit = pre.querySelector('.row.hit');"
                   " return pre.scrollTop > 0 && hit.offsetTop >= pre.scrollTop &&"
                   " hit.offsetTop + hit.offsetHeight <= pre.scrollTop + pre.clientHeight; })()" % panel)
    expect(shown, "the accessing instruction is not scrolled into view")
    b.click("%s button:nth-of-type(2)" % panel)
    hit = b.eval("document.querySelector('%s .row.hit').textContent" % panel)
    expect(hit == "0x7f00000019c8  mov [rsi+0x10], rax", "Intel syntax reads %r" % hit)
    # 3 of its 10 samples landed where nothing named the code: the page says so.
    notes = b.eval("document.getElementById('notes').textContent")
    expect("30.00% of the samples landed in code wasp could not place" in notes,
           "the notes do not say that 3 of 10 samples could not be placed: %r" % notes[:200])
    no_problems(b, "JIT page")
    return "JIT disassembly: %d rows" % len(rows)


def check_java(b, html_path, report):
    """A real JVM run: the top pair's Java methods and the disassembly of the
    JIT-compiled code around its watch instruction, with source rows."""
    load(b, html_path)
    top = report["pairs"][0]
    watch_fn = top["watch"]["frames"][0]["function"]
    text = b.eval("document.body.innerText")
    expect(watch_fn in text, "the top pair's method %r is not on the page" % watch_fn)
    panel = "#detail-watch .code"
    rows = b.eval("[...document.querySelectorAll('%s .row')].map(e => e.className + '|' + e.textContent)"
                  % panel)
    insns = [r for r in rows if r.startswith("row") and not r.startswith("row src")
             and not r.startswith("row gap")]
    expect(len(insns) >= 10, "the watch side shows %d instruction rows, not the JIT code" % len(insns))
    hit = b.eval("(document.querySelector('%s .row.hit') || {}).textContent" % panel) or ""
    want = top["watch"]["instruction"]
    expect(hit.endswith(want), "the highlighted instruction %r is not the watch's %r" % (hit, want))
    src = [r.split("|", 1)[1] for r in rows if r.startswith("row src")]
    file = top["watch"]["frames"][0]["file"]
    expect(any(file in s for s in src), "no source row names %s: %r" % (file, src[:5]))
    no_problems(b, "Java page")
    return "Java: %s, %d instruction rows, %d source rows" % (watch_fn, len(insns), len(src))


def main_java(html_path, json_path):
    with open(json_path) as f:
        report = json.load(f)
    binary = cdp.find_chromium()
    if not binary or not report["pairs"]:
        print("no chromium on PATH" if not binary else "the Java run found no pairs")
        return 1
    b = cdp.Browser(binary)
    try:
        b.open_page()
        print(check_java(b, html_path, report))
        return 0
    except (Fail, cdp.CdpError) as e:
        print(e)
        return 1
    finally:
        b.close()


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--java":
        return main_java(sys.argv[2], sys.argv[3])
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    html_path, json_path = sys.argv[1:3]
    jit_path = sys.argv[3] if len(sys.argv) == 4 else None
    with open(json_path) as f:
        report = json.load(f)
    with open(html_path) as f:
        html = f.read()
    binary = cdp.find_chromium()
    if not binary:
        print("no chromium on PATH")
        return 1
    if not report["pairs"]:
        print("the run found no pairs; nothing to check")
        return 1
    b = cdp.Browser(binary)
    try:
        with tempfile.TemporaryDirectory(prefix="wasp-html.") as tmp:
            b.open_page()
            what = check_report(b, report, html_path)
            check_hostile(b, html, tmp)
            check_code_hook(b, html, tmp)
            if jit_path:
                what += "; " + check_jit(b, jit_path)
        print(what)
        return 0
    except (Fail, cdp.CdpError) as e:
        print(e)
        return 1
    finally:
        b.close()


if __name__ == "__main__":
    sys.exit(main())
