"""tools/ui_timing.py's count of controls within 1.3 × a floor (bench/ui_latency.py's summary line): against
the run's floor, and against the floor's slider measured just before each control."""

from tools import ui_timing


def _report(controls):
    page = ui_timing.PageResult("Page", "page", controls=controls)
    return {"pages": [page]}


def test_counts_each_control_against_the_floor_beside_it_and_the_runs_floor():
    controls = [
        # 260 ms: over 1.3 × a 180 ms run floor (234), within 1.3 × its own 210 ms floor (273).
        ui_timing.ControlResult("slider", "A", "a", times_ms=[250.0, 260.0, 270.0], beside_ms=[200.0, 210.0, 220.0]),
        # 200 ms: within the run's floor, over 1.3 × a 150 ms floor beside it (195).
        ui_timing.ControlResult("select", "B", "b", times_ms=[200.0], beside_ms=[150.0]),
        # skipped controls and controls without a floor beside them are not counted against one.
        ui_timing.ControlResult("toggle", "C", "c", skipped="no figure changed"),
        ui_timing.ControlResult("radio", "D", "d", times_ms=[100.0]),
    ]
    line = ui_timing.within_line(_report(controls), 180.0)
    assert "the run's floor: **2 of 3**" in line
    assert "the floor measured beside each: **1 of 2**" in line
    assert "150–210 ms" in line


def test_without_floors_beside_the_line_says_only_the_runs_count():
    line = ui_timing.within_line(_report([ui_timing.ControlResult("slider", "A", "a", times_ms=[100.0])]), 100.0)
    assert "**1 of 1**" in line
    assert "beside" not in line
