#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Password guessing must not starve scrapes (issue 26 item 3): 8 client
# addresses (127.0.0.2-9) guess basic auth passwords as fast as they can
# (cost-10 bcrypt hash, new connection per guess, as the server closes after
# a 401) while a scraper with the right password scrapes every 25 ms from
# 127.0.0.1 over one keep-alive connection. Its latency p99 must stay under
# 100 ms. The exporter checks passwords on one low-priority thread, never
# on the threads that answer scrapes, and after 3 wrong passwords an
# address waits 1 s, 2 s .. 60 s before its next check (429 meanwhile).
# Also checked: the guessers were answered (401 or 429, or closed at the
# request deadline while their check waited), the 4th wrong password in a
# row from one address gets 429 at once, and a password already checked
# right still works from that address; one wrong password repeated (a
# misconfigured scraper) gets 401 every time and does not lock out the
# right one from the same address. Loopback only; bounded (12 s of guessing).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/export_lib.sh"
need_dmt
need_cmd curl
need_cmd python3
REC=$TOP/tests/fixtures/lab-patched-bulk.dmtrec
[ -s "$REC" ] || fail "fixture $REC missing"

HASH=$(bcrypt_hash 'right pass')
printf "basic_auth_users:\n  prometheus: '%s'\n" "$HASH" >"$TMPD/web.yml"
export_start --from "$REC" --web.config.file "$TMPD/web.yml"

python3 - "$EXP_PORT" <<'EOF' || fail "password guessing starved the scraper"
import base64, http.client, multiprocessing, os, socket, sys, threading, time

port = int(sys.argv[1])
GUESS_S = 12.0

def auth(user, pw):
    return "Basic " + base64.b64encode(("%s:%s" % (user, pw)).encode()).decode()

def guess_loop(n, t, codes):
    src = "127.0.0.%d" % (n + 2)
    end = time.monotonic() + GUESS_S
    i = 0
    while time.monotonic() < end:
        i += 1
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=30,
                                           source_address=(src, 0))
            c.request("GET", "/metrics", headers={"Authorization": auth("prometheus", "guess%d-%d-%d" % (n, t, i))})
            st = c.getresponse().status
            c.close()
        except OSError:
            st = "closed"	# waited past the request deadline (--http-timeout)
        codes[st] = codes.get(st, 0) + 1

def guesser(n, q):
    """One address, two guesses in flight at a time."""
    # In the field guessers run on other machines; here they share the two
    # cores with the scraper, so they run at nice 19: the measurement is
    # then of what guessing costs the exporter, not the harness's own CPU.
    os.nice(19)
    codes = {}
    ts = [threading.Thread(target=guess_loop, args=(n, t, codes)) for t in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    q.put(("127.0.0.%d" % (n + 2), codes))

def scrape(conn):
    t0 = time.monotonic()
    conn.request("GET", "/metrics", headers={"Authorization": auth("prometheus", "right pass")})
    r = conn.getresponse()
    r.read()
    return r.status, time.monotonic() - t0

def p99(lat):
    lat = sorted(lat)
    return lat[min(len(lat) - 1, int(len(lat) * 0.99))]

conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=("127.0.0.1", 0))
st, _ = scrape(conn)
if st != 200:
    print("FAIL: the right password got %s" % st); sys.exit(1)

quiet = []
for _ in range(100):
    st, dt = scrape(conn)
    quiet.append(dt)
    time.sleep(0.025)
print("  scraper alone: p99 %.1f ms over %d scrapes" % (p99(quiet) * 1000, len(quiet)))

q = multiprocessing.Queue()
procs = [multiprocessing.Process(target=guesser, args=(n, q)) for n in range(8)]
for p in procs:
    p.start()
time.sleep(1.0)
lat, bad = [], []
end = time.monotonic() + GUESS_S - 2
while time.monotonic() < end:
    st, dt = scrape(conn)
    lat.append(dt)
    if st != 200:
        bad.append(st)
    time.sleep(0.025)
results = [q.get(timeout=60) for _ in procs]
for p in procs:
    p.join(30)
total = {}
for src, codes in results:
    for k, v in codes.items():
        total[k] = total.get(k, 0) + v
print("  8 guessers (127.0.0.2-9) for %.0f s: answers %s" % (GUESS_S, dict(sorted(total.items(), key=str))))
print("  scraper while guessed at: p99 %.1f ms, max %.1f ms over %d scrapes" %
      (p99(lat) * 1000, max(lat) * 1000, len(lat)))
if bad:
    print("FAIL: the scraper got %d non-200 answers: %s" % (len(bad), bad[:5])); sys.exit(1)
# 100 ms; on a machine so loaded that the scraper alone is slower than
# 50 ms at p99, twice its own p99 (either way, far below the seconds a
# bcrypt per guess on the answering threads costs)
limit = max(0.100, 2 * p99(quiet))
if p99(lat) >= limit:
    print("FAIL: scrape p99 %.1f ms while 8 addresses guess, want < %.0f ms" % (p99(lat) * 1000, limit * 1000)); sys.exit(1)

if set(total) - {401, 429, "closed"} or not total.get(401):
    print("FAIL: guesses got %s, want 401s (and 429s)" % total); sys.exit(1)

# one address guessing in a row: 3 free wrong passwords, then 429 at once
def one(src, pw):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(src, 0))
    c.request("GET", "/metrics", headers={"Authorization": auth("prometheus", pw)})
    st = c.getresponse().status
    c.close()
    return st

for i in range(6):	# 3 free wrong passwords, then a wait
    if one("127.0.0.10", "wrong%d" % i) == 429:
        break
else:
    print("FAIL: 127.0.0.10 got no 429 after 6 wrong passwords in a row"); sys.exit(1)
if i != 4:
    print("FAIL: 127.0.0.10's first 429 came after %d wrong passwords, want 4 (3 free + 1)" % i); sys.exit(1)
st = one("127.0.0.10", "another guess")
if st != 429:
    print("FAIL: 127.0.0.10 in its backoff got %s for another guess, want 429" % st); sys.exit(1)
# a password checked before needs no check: a scraper behind the same
# address as a guesser is not locked out
st = one("127.0.0.10", "right pass")
if st != 200:
    print("FAIL: 127.0.0.10 in its backoff got %s with the known right password, want 200" % st); sys.exit(1)
# On a new connection: the keep-alive one has been idle since the guessing
# ended (the guessers' last requests wait out the request deadline, then
# 127.0.0.10's checks run at nice 10: 24 s with both cores busy), and the
# exporter closes a connection idle for --http-timeout (10 s), as it should;
# a request sent on it then meets the close ("closed without response").
conn.close()
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=("127.0.0.1", 0))
st, _ = scrape(conn)
if st != 200:
    print("FAIL: the scraper's right password afterwards got %s" % st); sys.exit(1)
print("  4th wrong password in a row from one address: 429 at once; its known right password still 200")

# a misconfigured scraper repeating one wrong password: 401 each time (one
# bcrypt, then the failure cache), never 429, and the right password from
# the same address, checked for the first time, is still let in
codes = [one("127.0.0.11", "stale password") for i in range(8)]
if codes != [401] * 8:
    print("FAIL: one wrong password repeated from 127.0.0.11 got %s, want 401 x 8" % codes); sys.exit(1)
st = one("127.0.0.11", "right pass")
if st != 200:
    print("FAIL: the right password from 127.0.0.11 after a repeated wrong one got %s" % st); sys.exit(1)
print("  one wrong password repeated 8 times: 401 each (no backoff); the right one beside it 200")
EOF
export_stop
echo PASS
