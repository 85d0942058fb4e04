"""gpu_peers.py's reading of JAX's profiler traces, on synthetic traces (this machine's CPU produces
no GPU events), its choice of cases, and the reading of each peer's inputs ahead of its timed calls.

    python3 -m unittest bench/peers/test_gpu_peers.py
"""

import argparse
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_peers  # noqa: E402

HOST, GPU = 701, 1


def process(pid, name):
    return {"ph": "M", "pid": pid, "name": "process_name", "args": {"name": name}}


def complete(pid, name, ts, dur, tid=7):
    return {"ph": "X", "pid": pid, "tid": tid, "name": name, "ts": ts, "dur": dur}


def call(k, ts, dur):
    return complete(HOST, gpu_peers.CALL_ANNOTATION.format(k), ts, dur, tid=1)


class DeviceSpansTest(unittest.TestCase):
    def test_each_call_spans_its_first_gpu_event_to_its_last(self):
        trace = {"traceEvents": [
            process(HOST, "/host:CPU"), process(GPU, "/device:GPU:0"),
            {"ph": "M", "pid": GPU, "tid": 3, "name": "thread_name", "args": {"name": "Stream #14"}},
            call(0, 100.0, 200.0), call(1, 400.0, 150.0),
            complete(HOST, "PjitFunction(f)", 101.0, 60.0, tid=1),  # host work inside a call: not the GPU's
            complete(GPU, "void opendml::internal::nonzero_kernel<float>", 160.5, 40.25, tid=3),
            complete(GPU, "loop_broadcast_fusion", 150.0, 5.0, tid=3),
            complete(GPU, "MemcpyD2D", 210.0, 12.0, tid=4),  # another stream of the same GPU
            complete(GPU, "void opendml::internal::nonzero_kernel<float>", 470.0, 30.0, tid=3),
        ]}
        spans, outside = gpu_peers.device_spans_us(trace, [gpu_peers.CALL_ANNOTATION.format(k) for k in range(2)])
        self.assertEqual(spans, [222.0 - 150.0, 30.0])
        self.assertEqual(outside, 0)

    def test_events_outside_every_call_are_counted_not_attributed(self):
        trace = {"traceEvents": [
            process(GPU, "/device:GPU:0"), process(HOST, "/host:CPU"),
            call(1, 500.0, 100.0), call(0, 100.0, 100.0),  # in any order
            complete(GPU, "before", 50.0, 10.0),
            complete(GPU, "straddles the end of call 0", 190.0, 20.0),
            complete(GPU, "between the calls", 300.0, 10.0),
            complete(GPU, "k1", 520.0, 10.0),
            complete(GPU, "k2", 560.0, 30.0),
            complete(GPU, "after", 700.0, 1.0),
        ]}
        names = [gpu_peers.CALL_ANNOTATION.format(k) for k in range(2)]
        spans, outside = gpu_peers.device_spans_us(trace, names)
        self.assertEqual(spans, [None, 70.0])
        self.assertEqual(outside, 4)

    def test_names_match_exactly(self):
        # Call 1's events are not call 10's, nor is another annotation with a longer name one of ours.
        trace = {"traceEvents": [
            process(GPU, "/device:GPU:0"),
            call(10, 0.0, 50.0), complete(GPU, "k", 10.0, 5.0),
            complete(HOST, gpu_peers.CALL_ANNOTATION.format(1) + " (other)", 100.0, 50.0),
            complete(GPU, "k", 110.0, 5.0),
        ]}
        names = [gpu_peers.CALL_ANNOTATION.format(k) for k in range(11)]
        spans, outside = gpu_peers.device_spans_us(trace, names)
        self.assertEqual(spans[10], 5.0)
        self.assertEqual(spans[:10], [None] * 10)
        self.assertEqual(outside, 1)

    def test_a_trace_without_a_gpu_gives_no_spans(self):
        # --simulate: JAX on the CPU, whose work is host events.
        trace = {"traceEvents": [process(HOST, "/host:CPU"), call(0, 0.0, 100.0),
                                 complete(HOST, "loop_broadcast_fusion", 10.0, 20.0)]}
        self.assertEqual(gpu_peers.device_spans_us(trace, [gpu_peers.CALL_ANNOTATION.format(0)]), ([None], 0))
        self.assertEqual(gpu_peers.device_spans_us({}, [gpu_peers.CALL_ANNOTATION.format(0)]), ([None], 0))

    def test_a_gpu_event_without_a_duration_is_an_instant(self):
        trace = {"traceEvents": [process(GPU, "/device:GPU:1"), call(0, 0.0, 100.0),
                                 {"ph": "X", "pid": GPU, "name": "k", "ts": 40}]}
        self.assertEqual(gpu_peers.device_spans_us(trace, [gpu_peers.CALL_ANNOTATION.format(0)]), ([0.0], 0))


class SelectedTest(unittest.TestCase):
    def test_a_filtered_case_keeps_its_data(self):
        """A case picked out by --filter or --max-mib is seeded by its place in the whole list, so
        that running it alone measures the input the full run measured."""
        def args(*filters, max_mib=float("inf")):
            return argparse.Namespace(quick=False, filter=list(filters), max_mib=max_mib)

        whole = gpu_peers.selected(args())
        self.assertEqual([place for place, _ in whole], list(range(len(whole))))
        seeds = {case.name: place for place, case in whole}
        for chosen in (args("rank 8"), args("1000 x", "n=2^20 "), args(max_mib=1)):
            picked = gpu_peers.selected(chosen)
            self.assertTrue(picked)
            self.assertEqual([place for place, _ in picked], [seeds[case.name] for _, case in picked])


class CopySizeTest(unittest.TestCase):
    def test_half_the_bytes_in_vectors_and_from_one_mib_in_whole_pages(self):
        mib = gpu_peers.MIB
        for nbytes, half in ((8, 16), (4096, 2048), (4097, 2048), (1 << 20, 512 << 10),
                             (2 * mib - 32, mib - 16), (2 * mib + 96, mib), (8 * mib + 96, 4 * mib),
                             (128 * mib + 7200, 64 * mib)):
            self.assertEqual(gpu_peers.copy_size(nbytes), half, nbytes)
        for nbytes in range(2 * mib, 2 * mib + 3 * 8192, 24):  # never more than half, never odd pages
            size = gpu_peers.copy_size(nbytes)
            self.assertEqual(size % 4096, 0)
            self.assertTrue(nbytes // 2 - 4096 < size <= nbytes // 2)

    def test_a_record_gives_back_the_bytes_its_copy_moved(self):
        for nbytes in (16, 4096, (256 << 20) + 4096):
            record = {"peers": {"copy": {"format": gpu_peers.COPY_FORMAT.format(nbytes), "time_us": 1.0}}}
            self.assertEqual(gpu_peers.copied_bytes(record), nbytes)


class Buffer:
    """Stands for a rotation's device buffer: records each read (max) in a shared log."""

    def __init__(self, name, log):
        self.name, self.log = name, log

    def max(self):
        self.log.append(self.name)


class TouchTest(unittest.TestCase):
    def env(self):
        return gpu_peers.Env(None, None, None, None, "cpu", gpu_peers.WallClock(), None, None, {}, 4 << 20, 0.001)

    def test_the_calls_rotations_are_read_once_in_their_order(self):
        log = []
        buffers = [Buffer(k, log) for k in range(5)]
        gpu_peers.touch_buffers(self.env(), buffers, 3)
        self.assertEqual(log, [0, 1, 2])
        log.clear()
        gpu_peers.touch_buffers(self.env(), buffers, 12)  # more calls than rotations: each read once
        self.assertEqual(log, [0, 1, 2, 3, 4])

    def test_every_timed_loop_starts_after_its_calls_rotations_are_read(self):
        events = []

        def call(i):
            events.append(("call", i))

        peer = gpu_peers.Peer(call, None, "synthetic")
        result = gpu_peers.measure(self.env(), peer, lambda calls: events.append(("touch", calls)))
        touches = [k for k, e in enumerate(events) if e[0] == "touch"]
        self.assertEqual([events[k][1] for k in touches], [result["runs"], gpu_peers.clamp(result["runs"] / 3, 5, 50)])
        # Each touch comes right before the loop it prepares, whose first call is rotation 0, and
        # the timed loop makes exactly the calls it read for.
        for k in touches:
            self.assertEqual(events[k + 1], ("call", 0))
        timed = events[touches[0] + 1:touches[1]]
        self.assertEqual(timed, [("call", i) for i in range(result["runs"])])


if __name__ == "__main__":
    unittest.main()
