#!/usr/bin/python3
"""Tests of the backfill comparison's scripts: the figures of backfill_metrics.py computed by
hand on small job lists, the workload generator's determinism and bounds, the scenario it
writes, and the reading of a `paceline sim` report and of Slurm's jobcomp lines."""

import io
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import backfill_metrics as bm  # noqa: E402
import backfill_slurm_run as bs  # noqa: E402
import backfill_workload as bw  # noqa: E402


def job(name, cls, cpus, nodes, submit, start, end, run=None, limit=600.0):
    return {"name": name, "class": cls, "cpus": cpus, "nodes": nodes, "submit_s": submit,
            "start_s": start, "end_s": end, "run_s": end - start if run is None else run,
            "limit_s": limit}


class MetricsTest(unittest.TestCase):
    # 2 nodes x 4 cpus = 8 cpus.
    ROWS = [
        job("a", "small", 2, 1, 0.0, 0.0, 100.0),      # wait 0, run 100
        job("b", "small", 4, 1, 10.0, 30.0, 35.0),     # wait 20, run 5 (bounded to 10)
        job("g", "medium", 8, 2, 20.0, 100.0, 200.0),  # wait 80, run 100
    ]

    def test_utilization_is_held_cpu_time_over_capacity_times_makespan(self):
        m = bm.metrics(self.ROWS, nodes=2, cpus=4)
        self.assertEqual(m["makespan_s"], 200.0)
        held = 2 * 100 + 4 * 5 + 8 * 100  # 1020 cpu-s
        self.assertAlmostEqual(m["utilization"], held / (8 * 200.0))

    def test_bounded_slowdown_bounds_short_runs_and_never_goes_below_one(self):
        m = bm.metrics(self.ROWS, nodes=2, cpus=4)
        # a: (0+100)/100 = 1; b: (20+5)/max(5,10) = 2.5; g: (80+100)/100 = 1.8
        self.assertAlmostEqual(m["slowdown"], (1.0 + 2.5 + 1.8) / 3)
        fast = job("f", "small", 1, 1, 0.0, 0.0, 2.0)  # (0+2)/10 = 0.2 -> 1
        self.assertEqual(bm.bounded_slowdown(fast), 1.0)

    def test_waits_per_class_and_the_largest_gang(self):
        rows = self.ROWS + [job("h", "large", 8, 2, 50.0, 250.0, 300.0),
                            job("i", "large", 8, 2, 60.0, 61.0, 70.0)]
        m = bm.metrics(rows, nodes=2, cpus=4)
        self.assertEqual(m["wait"]["small"], (2, 10.0, 20.0))
        self.assertEqual(m["wait"]["medium"], (1, 80.0, 80.0))
        self.assertEqual(m["wait"]["large"][0:2], (2, (200.0 + 1.0) / 2))
        # Equal sizes: the earliest submitted is the largest gang.
        self.assertEqual(m["largest_gang"], ("g", 2, 80.0))
        self.assertEqual(m["max_gang_wait"], 200.0)

    def test_percentile_is_nearest_rank(self):
        v = list(range(1, 21))  # 1..20
        self.assertEqual(bm.percentile(v, 95), 19)
        self.assertEqual(bm.percentile(v, 100), 20)
        self.assertEqual(bm.percentile([7], 95), 7)
        self.assertIsNone(bm.percentile([], 95))

    def test_table_refuses_runs_with_different_jobs(self):
        other = self.ROWS[:2]
        with self.assertRaisesRegex(ValueError, "does not hold the same jobs"):
            bm.table([("x", self.ROWS), ("y", other)], 2, 4)

    def test_table_lists_every_gang_per_run(self):
        later = [dict(r) for r in self.ROWS]
        later[2]["start_s"], later[2]["end_s"] = 150.0, 250.0
        t = bm.table([("x", self.ROWS), ("y", later)], 2, 4)
        self.assertIn("| g | 2 | 100 | 600 | 80.0 | 130.0 |", t)
        self.assertIn("| makespan (s) | 200 | 250 |", t)

    def test_windows_split_held_cpu_time_and_count_jobs_by_submit_time(self):
        # Cut at 50 and 150; the makespan is 200.
        w = bm.windows(self.ROWS, nodes=2, cpus=4, cuts=[50.0, 150.0, 400.0])
        self.assertEqual([(a, b) for a, b, _, _ in w], [(0.0, 50.0), (50.0, 150.0),
                                                         (150.0, 200.0)])
        # [0, 50): a holds 2 x 50, b 4 x 5; [50, 150): a 2 x 50, g 8 x 50; [150, 200): g 8 x 50.
        self.assertAlmostEqual(w[0][2], (100 + 20) / (8 * 50.0))
        self.assertAlmostEqual(w[1][2], (100 + 400) / (8 * 100.0))
        self.assertAlmostEqual(w[2][2], 400 / (8 * 50.0))
        # a, b and g were all submitted before 50.
        self.assertEqual(w[0][3]["small"], (2, 20.0, (1.0 + 2.5) / 2))
        self.assertEqual(w[0][3]["medium"], (1, 80.0, 1.8))
        self.assertEqual(w[1][3]["small"], (0, 0, None))
        t = bm.window_table("x", self.ROWS, 2, 4, [50.0])
        self.assertIn("| 0-50 | 30.0 % | 2 / 20 / 1.750 | 1 / 80 / 1.800 | 0 / 0 / - |", t)

    def test_windows_refuse_times_that_do_not_rise(self):
        self.assertEqual(bm.parse_cuts("560,840"), [560.0, 840.0])
        for bad in ("840,560", "0,10", "a,b", ""):
            with self.assertRaisesRegex(ValueError, "--windows"):
                bm.parse_cuts(bad)

    def test_read_csv_names_the_line_of_a_job_that_did_not_run(self):
        with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
            f.write(bw.CSV_HEADER + "\n")
            f.write("a,small,1,1,0.000,0.000,5.000,5,60\n")
            f.write("b,small,1,1,1.000,,,5,60\n")
        try:
            with self.assertRaisesRegex(ValueError, r":3: start_s is empty"):
                bm.read_csv(f.name)
        finally:
            os.unlink(f.name)

    def test_csv_round_trip(self):
        buf = io.StringIO()
        bw.write_csv(self.ROWS, buf)
        with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
            f.write(buf.getvalue())
        try:
            back = bm.read_csv(f.name)
        finally:
            os.unlink(f.name)
        self.assertEqual([r["name"] for r in back], ["a", "b", "g"])
        self.assertEqual(back[2]["start_s"], 100.0)


class WorkloadTest(unittest.TestCase):
    def test_same_seed_same_list_other_seed_other_list(self):
        self.assertEqual(bw.generate(seed=3), bw.generate(seed=3))
        self.assertNotEqual(bw.generate(seed=3)["jobs"], bw.generate(seed=4)["jobs"])

    def test_sizes_limits_and_arrivals_are_within_bounds(self):
        w = bw.generate(seed=5, nodes=32, cpus=32, window_min=18)
        classes = {j["class"] for j in w["jobs"]}
        self.assertEqual(classes, {"small", "medium", "large"})
        for j in w["jobs"]:
            self.assertGreaterEqual(60 * j["limit_min"], j["run_s"] + 30, j)
            self.assertLess(j["at_s"], w["window_s"], j)
            if j["class"] == "small":
                self.assertTrue(1 <= j["cpus"] <= 4 and j["nodes"] == 1, j)
            else:
                self.assertEqual(j["cpus"], 32 * j["nodes"], j)
                self.assertLessEqual(j["nodes"], 16, j)
        self.assertGreater(min(j["nodes"] for j in w["jobs"] if j["class"] == "large"), 8)
        self.assertTrue(0.9 <= w["offered_load"] <= 1.2, w["offered_load"])

    def test_bad_sizes_are_refused(self):
        with self.assertRaisesRegex(ValueError, "--nodes"):
            bw.generate(nodes=10)

    def test_scenario_gangs_take_whole_hosts(self):
        w = {"seed": 1, "nodes": 8, "cpus_per_node": 16, "window_s": 300, "jobs": [
            {"name": "s", "class": "small", "at_s": 0, "cpus": 3, "nodes": 1, "run_s": 90,
             "limit_min": 3},
            {"name": "g", "class": "large", "at_s": 5, "cpus": 64, "nodes": 4, "run_s": 120,
             "limit_min": 4}]}
        y = bw.scenario_yaml(w, backfill=True)
        self.assertIn("backfill: true", y)
        self.assertIn("{count: 8, name: n, resources: {cpu: 16, memory: 16Gi}}", y)
        self.assertIn("instances: 1, sla: {max_running_time: 3m}, task: {resources: {cpu: 3,", y)
        self.assertIn("instances: 4, sla: {max_running_time: 4m, min_running_instances: 4},"
                      " task: {resources: {cpu: 16,", y)
        self.assertNotIn("backfill:", bw.scenario_yaml(w))

    def test_sim_rows_start_when_the_last_instance_runs(self):
        w = {"jobs": [{"name": "g", "class": "medium", "at_s": 5, "cpus": 64, "nodes": 2,
                       "run_s": 100, "limit_min": 3}]}
        rep = {"jobs": [{"name": "g", "submitted_s": 5.0, "finished_s": 130.0,
                         "latency_s": {"count": 2, "max": 25.0}}]}
        (r,) = bw.sim_rows(w, rep)
        self.assertEqual((r["submit_s"], r["start_s"], r["end_s"]), (5.0, 30.0, 130.0))
        rep["jobs"][0]["refused"] = "no"
        with self.assertRaisesRegex(ValueError, "refused"):
            bw.sim_rows(w, rep)


class SlurmTest(unittest.TestCase):
    def test_jobcomp_line_and_sbatch_arguments(self):
        rec = bs.parse_jobcomp_line(
            "JobId=7 Name=j0001-small JobState=COMPLETED StartTime=2026-11-29T09:41:30 "
            "EndTime=2026-11-29T09:41:34 ReservationName= SubmitTime=2026-11-29T09:41:28\n")
        self.assertEqual(rec["JobId"], "7")
        self.assertEqual(rec["ReservationName"], "")
        self.assertEqual(bs.slurm_time(rec["EndTime"]) - bs.slurm_time(rec["SubmitTime"]), 6)
        small = {"name": "s", "class": "small", "cpus": 3, "nodes": 1, "run_s": 90,
                 "limit_min": 3}
        self.assertEqual(bs.sbatch_args(small, 32)[-6:],
                         ["-N", "1", "-n", "3", "--wrap", "sleep 90"])
        gang = dict(small, **{"class": "large", "cpus": 64, "nodes": 2})
        self.assertIn("--ntasks-per-node=32", bs.sbatch_args(gang, 32))


if __name__ == "__main__":
    unittest.main()
