"""gpu_peers.py's reading of JAX's profiler traces, on synthetic traces (this machine's CPU produces
no GPU events).

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


if __name__ == "__main__":
    unittest.main()
