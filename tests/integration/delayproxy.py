"""delayproxy.py - a TCP proxy for fault tests: forwards LISTEN_PORT to
UPSTREAM_PORT on 127.0.0.1, delaying every chunk by DELAY_MS in each direction
(a distant database). SIGUSR1 toggles a partition: bytes are silently dropped
both ways and connections stay open, as a firewall's DROP rule does; SIGUSR2
heals it. Stops on SIGTERM.

  delayproxy.py LISTEN_PORT UPSTREAM_PORT DELAY_MS
"""
import asyncio
import signal
import sys

listen_port, upstream_port, delay = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]) / 1000
partitioned = False


async def pump(reader, writer):
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue()

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
                queue.put_nowait((loop.time() + delay, data))
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


async def main():
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGUSR1, toggle, True)
    loop.add_signal_handler(signal.SIGUSR2, toggle, False)
    stop = loop.create_future()
    loop.add_signal_handler(signal.SIGTERM, stop.set_result, None)
    server = await asyncio.start_server(handle, "127.0.0.1", listen_port)
    async with server:
        await stop


asyncio.run(main())
