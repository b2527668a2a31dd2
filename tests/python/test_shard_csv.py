"""A shard's CSVs (lumos sweep --shard) start with a #lumos-sweep line: lumos.read_csv skips it
and reads the same table as the whole sweep's rows of that shard."""
import subprocess

import pandas as pd

import lumos


def test_read_csv_skips_the_shard_line_and_keeps_the_columns(tmp_path, lumos_binary):
    shard = tmp_path / "s0.csv"
    whole = tmp_path / "all.csv"
    args = ["sweep", "--layers", "4", "--gpus", "64", "--tp", "1,2", "--pp", "1,2", "--gpu",
            "h100", "--threads", "2"]
    subprocess.run([lumos_binary, *args, "--shard", "0/1", "-o", str(shard)], check=True,
                   capture_output=True)
    subprocess.run([lumos_binary, *args, "-o", str(whole)], check=True, capture_output=True)
    assert shard.read_text().startswith("#lumos-sweep ")
    pd.testing.assert_frame_equal(lumos.read_csv(str(shard)), lumos.read_csv(str(whole)))
