"""Every ported TVM row that does not pass, with the reason (``id: reason``).

The runners mark these ``xfail(strict=True)``: a row that starts passing
fails the run until its line here is removed.
"""

REWRITE: dict[str, str] = {
    'TestVector-19': 'TVM folds broadcast(0.0) * x to 0.0; for negative x the product is -0.0 (NaN for inf/NaN): not exact, not folded',
    'TestVector-21': "TVM's truncdiv(ramp(x, 4), 2) -> ramp(x / 2, 2) is wrong when lanes change sign (x = -1: 0, 1, 3, 5, not 0, 2, 4, 6); x's sign is unknown",
    'TestVector-22': "TVM's truncdiv(ramp(x, 4), 2) -> ramp(x / 2, 2) is wrong when lanes change sign (x = -1); x's sign is unknown",
    'TestVector-26': "TVM's truncmod(ramp(x, 4), 2) -> broadcast(x % 2) is wrong when lanes change sign (x = -1: -1, 1, 1, 1); x's sign is unknown",
    'TestSubIndex-67': "ours folds (x + 2) % 3 // 3 to 0 (the floormod's bound, ours; TVM's rewrite keeps it): sound, simpler than TVM",
    'TestSubBufferload-0': 'TVM folds load - load to 0.0 for floats; a NaN or inf load gives NaN: not exact, not folded',
}
