"""delayproxy.py - a TCP proxy for fault tests: forwards LISTEN_PORT to
UPSTREAM_PORT on 127.0.0.1, delaying every chunk by DELAY_MS in each direction
(a distant database). With --jitter J each chunk's delay is drawn uniformly
from [DELAY_MS - J, DELAY_MS + J] (at least 0), but a chunk is never delivered
before the one read ahead of it on the same connection and direction: bytes
keep their order, as on one TCP connection. SIGUSR1 toggles a partition: bytes
are silently dropped both ways and connections stay open, as a firewall's DROP
rule does; SIGUSR2 heals it. Stops on SIGTERM.

With --control FILE, SIGHUP re-reads FILE and applies the settings it names, as
space- or newline-separated words: delay=MS, jitter=MS, partition=0|1 (any
subset; the others stay as they are). Each change applies to every chunk read
from then on, on open connections too, and bytes still keep their order (a
chunk read after the delay drops is delivered right after the slower ones read
before it). Every SIGHUP prints one line "control N: delay_ms=D jitter_ms=J
partitioned=0|1" (N counts the SIGHUPs; an unreadable or malformed file prints
"control N: error ..." and changes nothing), so a test can wait for it.
Without --control, SIGHUP keeps its default action.

  delayproxy.py LISTEN_PORT UPSTREAM_PORT DELAY_MS [--jitter MS] [--seed N]
                [--control FILE]
"""
import argparse
import asyncio
import random
import signal

ap = argparse.ArgumentParser(description="TCP delay/partition proxy for tests")
ap.add_argument("listen_port", type=int)
ap.add_argument("upstream_port", type=int)
ap.add_argument("delay_ms", type=float, help="one-way delay of every chunk")
ap.add_argument("--jitter", type=float, default=0.0, metavar="MS",
                help="each chunk's delay is DELAY_MS +- up to MS (uniform), order kept")
ap.add_argument("--seed", type=int, default=None, help="seed of the jitter draws")
ap.add_argument("--control", metavar="FILE", default=None,
                help="on SIGHUP, apply delay=MS jitter=MS partition=0|1 read from FILE")
args = ap.parse_args()
if args.delay_ms < 0 or args.jitter < 0:
    ap.error("delay and jitter must be >= 0")

listen_port, upstream_port = args.listen_port, args.upstream_port
delay, jitter = args.delay_ms / 1000, args.jitter / 1000
rng = random.Random(args.seed)
partitioned = False
controls = 0


def chunk_delay():
    if jitter == 0:
        return delay
    return max(0.0, delay + rng.uniform(-jitter, jitter))


async def pump(reader, writer):
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue()
    last_due = 0.0

    async def deliver():
        while True:
            due, data = await queue.get()
            if data is None:
                break
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if not partitioned:
                writer.write(data)
                await writer.drain()
        writer.close()

    task = asyncio.ensure_future(deliver())
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            if not partitioned:
                # Never before the chunk ahead of it: jitter must not reorder bytes.
                last_due = max(last_due, loop.time() + chunk_delay())
                queue.put_nowait((last_due, data))
    except (ConnectionError, OSError):
        pass
    queue.put_nowait((0, None))
    try:
        await task
    except (ConnectionError, OSError):
        pass


async def handle(creader, cwriter):
    try:
        ureader, uwriter = await asyncio.open_connection("127.0.0.1", upstream_port)
    except OSError:
        cwriter.close()
        return
    await asyncio.gather(pump(creader, uwriter), pump(ureader, cwriter))


def toggle(on):
    global partitioned
    partitioned = on


def control():
    """SIGHUP with --control: the settings named in the control file."""
    global delay, jitter, partitioned, controls
    controls += 1
    try:
        with open(args.control) as f:
            words = f.read().split()
        new = {}
        for w in words:
            k, sep, v = w.partition("=")
            if not sep or k not in ("delay", "jitter", "partition"):
                raise ValueError("unknown word %r" % w)
            if k == "partition":
                if v not in ("0", "1"):
                    raise ValueError("partition must be 0 or 1, got %r" % v)
                new[k] = v == "1"
            else:
                x = float(v)
                if not x >= 0:
                    raise ValueError("%s must be >= 0, got %r" % (k, v))
                new[k] = x / 1000
    except (OSError, ValueError) as e:
        print("control %d: error %s" % (controls, e), flush=True)
        return
    delay = new.get("delay", delay)
    jitter = new.get("jitter", jitter)
    partitioned = new.get("partition", partitioned)
    print("control %d: delay_ms=%g jitter_ms=%g partitioned=%d"
          % (controls, delay * 1000, jitter * 1000, partitioned), flush=True)


async def main():
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGUSR1, toggle, True)
    loop.add_signal_handler(signal.SIGUSR2, toggle, False)
    if args.control is not None:
        loop.add_signal_handler(signal.SIGHUP, control)
    stop = loop.create_future()
    loop.add_signal_handler(signal.SIGTERM, stop.set_result, None)
    server = await asyncio.start_server(handle, "127.0.0.1", listen_port)
    async with server:
        await stop


asyncio.run(main())
