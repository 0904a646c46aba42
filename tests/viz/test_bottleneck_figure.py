"""The bottleneck curve: two models on the same values (both attention models at 100 %) stay told apart."""

from viz.seq2seq import bottleneck_curve


def test_lines_on_the_same_values_differ_in_width_dash_and_marker():
    fig = bottleneck_curve(["1–30", "31–60"], {"no-attention": [0.9, 0.6], "bahdanau": [1.0, 1.0],
                                                "luong-general": [1.0, 1.0]})
    bahdanau, luong = fig.data[1], fig.data[2]
    assert list(bahdanau.y) == list(luong.y) == [100.0, 100.0]
    assert bahdanau.line.width > luong.line.width  # the later line is drawn inside the earlier
    assert (bahdanau.line.dash, bahdanau.marker.symbol) != (luong.line.dash, luong.marker.symbol)
    assert luong.marker.symbol.endswith("-open")  # the marker under it shows through
    assert fig.data[0].line.dash == "dash"  # no attention: dashed
