"""cdp.py - a small Chrome DevTools Protocol client over --remote-debugging-pipe.

Starts headless Chromium with the protocol on file descriptors 3 (commands
in) and 4 (replies and events out), NUL-terminated JSON messages, so no port,
no websocket library and no download are needed: python3 and the Debian
`chromium` package are enough. One page, flat sessions.

Records what a test must not see: uncaught exceptions, console errors,
failed log entries, dialogs (alert() would mean injected script ran) and any
network request that is not the file itself.
"""
import json
import os
import select
import shutil
import subprocess
import tempfile
import time


class CdpError(Exception):
    pass


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    def __init__(self, binary, timeout=30.0):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="wasp-html-chromium.")
        cmd_r, cmd_w = os.pipe()    # we write commands, Chromium reads fd 3
        ev_r, ev_w = os.pipe()      # Chromium writes fd 4, we read
        args = [binary, "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run", "--no-default-browser-check",
                "--disable-extensions", "--disable-dev-shm-usage",
                "--user-data-dir=" + self.profile,
                "--remote-debugging-pipe", "--window-size=1400,1000"]
        self.proc = subprocess.Popen(
            ["sh", "-c", 'exec "$0" "$@" 3<&%d 4>&%d' % (cmd_r, ev_w)] + args,
            pass_fds=(cmd_r, ev_w), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(cmd_r)
        os.close(ev_w)
        self.wfd, self.rfd = cmd_w, ev_r
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.session = None
        self.problems = []          # what the page must not do
        self.allowed_url = None

    # ---- transport ----
    def _read_message(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CdpError("Chromium did not answer within %.0f s" % self.timeout)
            ready, _, _ = select.select([self.rfd], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.rfd, 1 << 20)
            if not chunk:
                raise CdpError("Chromium closed the protocol pipe (crashed or failed to start)")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def _note(self, ev):
        method, p = ev.get("method"), ev.get("params", {})
        if method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            text = d.get("exception", {}).get("description") or d.get("text")
            self.problems.append("uncaught exception: %s" % text)
        elif method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            args = [a.get("value", a.get("description", "")) for a in p.get("args", [])]
            self.problems.append("console.%s: %s" % (p["type"], " ".join(map(str, args))))
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            self.problems.append("log error: %s" % p["entry"].get("text"))
        elif method == "Page.javascriptDialogOpening":
            self.problems.append("a dialog opened: %r" % p.get("message"))
            self.send("Page.handleJavaScriptDialog", {"accept": True}, wait=False)
        elif method == "Network.requestWillBeSent":
            url = p.get("request", {}).get("url", "")
            if url != self.allowed_url and not url.startswith("data:"):
                self.problems.append("network request: %s" % url)
        self.events.append(ev)

    def send(self, method, params=None, session=True, wait=True):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.wfd, json.dumps(msg).encode() + b"\0")
        if not wait:
            return None
        deadline = time.monotonic() + self.timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise CdpError("%s: %s" % (method, m["error"].get("message")))
                return m.get("result", {})
            if "method" in m:
                self._note(m)

    def wait_event(self, method):
        for i, ev in enumerate(self.events):
            if ev.get("method") == method:
                return self.events.pop(i)
        deadline = time.monotonic() + self.timeout
        while True:
            m = self._read_message(deadline)
            if "method" in m:
                self._note(m)
                if m["method"] == method:
                    self.events.pop()
                    return m

    # ---- page ----
    def open_page(self):
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)
        att = self.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True},
                        session=False)
        self.session = att["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(domain + ".enable")

    def navigate(self, url):
        self.allowed_url = url
        self.events = [e for e in self.events if e.get("method") != "Page.loadEventFired"]
        res = self.send("Page.navigate", {"url": url})
        if res.get("errorText"):
            raise CdpError("cannot open %s: %s" % (url, res["errorText"]))
        self.wait_event("Page.loadEventFired")

    def eval(self, expr):
        res = self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                              "awaitPromise": True})
        if "exceptionDetails" in res:
            d = res["exceptionDetails"]
            raise CdpError("evaluating %r: %s" % (expr[:80], d.get("exception", {}).get(
                "description") or d.get("text")))
        return res.get("result", {}).get("value")

    def click(self, selector):
        """A real mouse click in the middle of the first element matching selector."""
        box = self.eval("(() => { const e = document.querySelector(%s); if (!e) return null;"
                        " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
                        " return [r.left + r.width / 2, r.top + r.height / 2]; })()"
                        % json.dumps(selector))
        if not box:
            raise CdpError("nothing to click: %s" % selector)
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1],
                                                   "button": "left", "clickCount": 1})

    def type_into(self, selector, text):
        self.eval("document.querySelector(%s).focus()" % json.dumps(selector))
        self.send("Input.insertText", {"text": text})

    def settle(self):
        """Lets queued events (console, exceptions) arrive."""
        self.eval("new Promise(r => requestAnimationFrame(() => setTimeout(r, 50)))")

    def close(self):
        try:
            self.send("Browser.close", session=False, wait=False)
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            self.proc.wait()
        for fd in (self.wfd, self.rfd):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)
