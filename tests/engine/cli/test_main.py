"""The ``meshscope`` command, run in-process (and once as the installed console script)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine.evaluation.cost import TERMS, model_evaluation
from engine.hardware import load_hardware, preset_names
from engine.mapping.assignment import Mapping, read_mapping_file
from engine.mapping.partition import make_partition, partitioners
from engine.mapping.partition_graph import partition_graph
from engine.mapping.placement import make_placement, placers
from engine.search import objectives, strategies
from engine.search.pareto import algorithms
from engine.specs import load_network_spec
from engine.workloads import workloads
from tests.support.cli import run, run_json, run_on_a_terminal

SMALL = "linear-dense:M=2,N=8"
KINDS = (
    "networks", "hardware", "partitioners", "placers", "objectives", "strategies", "algorithms",
)  # fmt: skip


def engine_evaluation(network: str, hardware: str, partition: str | None, placement: str):
    """What the engine computes for the mapping the CLI builds from the same options."""
    net, hw = load_network_spec(network), load_hardware(hardware)
    part = make_partition(net, hw, partition, seed=0)
    place = make_placement(partition_graph(net, hw, part), hw, placement, seed=0)
    return net, hw, model_evaluation(net, hw, Mapping(part, place))


# ------------------------------------------------------------------ list
def expected_names(kind: str) -> set[str]:
    return {
        "networks": set(workloads),
        "hardware": set(preset_names()),
        "partitioners": set(partitioners.grammars()),
        "placers": set(placers),
        "objectives": set(objectives),
        "strategies": set(strategies),
        "algorithms": set(algorithms),
    }[kind]


def listed_names(kind: str, data) -> set[str]:
    if kind == "networks":
        return {g["name"] for g in data["generators"]}
    if kind == "hardware":
        return {h["name"] for h in data["presets"]}
    return set(data)


def test_list_json_lists_every_registry(capsys):
    data = run_json(capsys, "list", "--json")
    assert set(data) == set(KINDS)
    for kind in KINDS:
        assert listed_names(kind, data[kind]) == expected_names(kind)


@pytest.mark.parametrize("kind", KINDS)
def test_list_one_kind_json(capsys, kind):
    data = run_json(capsys, "list", kind, "--json")
    assert listed_names(kind, data) == expected_names(kind)
    if kind == "networks":
        for g in data["generators"]:
            assert isinstance(g["params"], dict) and g["description"]
    if kind == "hardware":
        cores = {h["name"]: h["cores"] for h in data["presets"]}
        assert cores == {n: load_hardware(n).n_cores for n in preset_names()}
        assert data["generic"] == "mesh:WxH[xK][@CXxCY]"
    if kind not in ("networks", "hardware"):
        assert all(isinstance(doc, str) and doc for doc in data.values())


def test_list_text_mentions_every_entry(capsys):
    code, out, err = run(capsys, "list")
    assert code == 0 and err == ""
    for kind in KINDS:
        assert f"{kind}:" in out
        for name in expected_names(kind):
            assert name in out


def test_console_script_runs(tmp_path):
    script = Path(sys.executable).with_name("meshscope")
    assert script.exists(), f"the console script is not installed next to {sys.executable}"
    done = subprocess.run(
        [str(script), "list", "placers", "--json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert set(json.loads(done.stdout)) == set(placers)


# ------------------------------------------------------------------ evaluate
def test_evaluate_json_has_the_documented_keys(capsys):
    data = run_json(capsys, "evaluate", "--network", SMALL, "--hardware", "loihi2", "--json")
    assert data["network"] == f"{SMALL},bits=1" and data["hardware"] == "loihi2"
    for key in ("latency_us", "energy_uj", "power_w", "max_link_messages"):
        assert isinstance(data[key], float) and data[key] > 0
    assert data["bottleneck"] in TERMS
    assert set(TERMS) == {"dendops", "synops", "synmem", "link", "barrier"}
    assert set(data["terms_us"]) == set(TERMS)
    assert data["latency_us"] == max(data["terms_us"].values())
    assert data["terms_us"][data["bottleneck"]] == data["latency_us"]
    assert data["cores_used"] == 4  # the natural split: 2 origin + 2 destination cores
    assert data["power_w"] == pytest.approx(data["energy_uj"] / data["latency_us"])
    assert "links" not in data


@pytest.mark.parametrize(
    ("network", "hardware", "partition", "placement"),
    [
        (SMALL, "loihi2", None, "packed-row"),
        ("mlp:widths=64-128-32", "mesh:4x4x2", "min+1", "spread-col"),
        ("qubo:n=80", "loihi2-x8", "cores:4,1,1", "random"),
    ],
)
def test_evaluate_json_equals_the_engine(capsys, network, hardware, partition, placement):
    argv = ["evaluate", "--network", network, "--hardware", hardware, "--placement", placement]
    if partition:
        argv += ["--partition", partition]
    data = run_json(capsys, *argv, "--json")
    _, hw, ev = engine_evaluation(network, hardware, partition, placement)
    expected = json.loads(json.dumps(ev.to_dict(hw)))
    assert {k: v for k, v in data.items() if k not in ("network", "hardware")} == expected


def test_evaluate_defaults_to_sparse_mlp_1_on_loihi2(capsys):
    data = run_json(capsys, "evaluate", "--json")
    assert data["network"] == "sparse-mlp-1" and data["hardware"] == "loihi2"
    _, _, ev = engine_evaluation("sparse-mlp-1", "loihi2", None, "packed-row")
    assert data["latency_us"] == ev.latency_us
    assert data["cores_used"] == ev.cores_used


def test_evaluate_links(capsys):
    # two chips of 2x2 routers: origin cores on chip 0, destination cores on chip 1
    network, hardware = "linear-dense:M=4,N=8", "mesh:2x2x1@2x1"
    data = run_json(
        capsys, "evaluate", "--network", network, "--hardware", hardware, "--links", "--json"
    )
    links = data["links"]
    assert isinstance(links, list) and links
    hw = load_hardware(hardware)
    kinds = set()
    for link in links:
        assert {"kind", "src", "dst", "messages", "bits", "utilization"} <= set(link)
        kinds.add(link["kind"])
        lengths = {
            "router": (3, 3),
            "off-chip": (3, 3),
            "core-to-router": (4, 3),
            "router-to-core": (3, 4),
        }[link["kind"]]
        assert (len(link["src"]), len(link["dst"])) == lengths
        assert link["messages"] > 0
        assert link["bits"] == link["messages"] * hw.links.message_bits
        assert 0 < link["utilization"] <= 1 + 1e-12
        if link["kind"] in ("router", "off-chip"):
            (c0, x0, y0), (c1, x1, y1) = link["src"], link["dst"]
            g0 = ((c0 % hw.chips_x) * hw.width + x0, (c0 // hw.chips_x) * hw.height + y0)
            g1 = ((c1 % hw.chips_x) * hw.width + x1, (c1 // hw.chips_x) * hw.height + y1)
            assert abs(g0[0] - g1[0]) + abs(g0[1] - g1[1]) == 1  # neighbours
            assert (c0 != c1) == (link["kind"] == "off-chip")
    assert kinds == {"router", "off-chip", "core-to-router", "router-to-core"}
    sent = sum(x["messages"] for x in links if x["kind"] == "core-to-router")
    received = sum(x["messages"] for x in links if x["kind"] == "router-to-core")
    assert sent == pytest.approx(received)
    assert max(x["messages"] for x in links) == pytest.approx(data["max_link_messages"])
    _, hw, ev = engine_evaluation(network, hardware, None, "packed-row")
    assert links == json.loads(json.dumps(ev.links(hw)))


def test_evaluate_text_output(capsys):
    code, out, err = run(capsys, "evaluate", "--network", SMALL, "--links")
    assert code == 0 and err == ""
    assert out.startswith(f"{SMALL},bits=1 on loihi2: 4 cores on 1 chip(s)")
    assert "bound by barrier" in out and "links (kind name:" in out
    assert "router-to-core  (0,0)->(0,0):2: 16.0" in out  # the page's notation


def test_save_and_evaluate_the_saved_mapping(capsys, tmp_path):
    path = tmp_path / "saved.json"
    first = run_json(
        capsys,
        "evaluate", "--network", "mlp:widths=64-128-32", "--hardware", "mesh:4x4x2",
        "--partition", "min+2", "--placement", "random", "--seed", "5",
        "--save", str(path), "--json",
    )  # fmt: skip
    saved = json.loads(path.read_text())
    assert saved["evaluation"]["latency_us"] == first["latency_us"]
    assert saved["evaluation"]["energy_uj"] == first["energy_uj"]
    mf = read_mapping_file(path)
    assert mf.network_name == first["network"] == "mlp:widths=64-128-32,density=0.15"
    assert mf.hardware_name == "mesh:4x4x2"
    # names come from the file; the mapping is read back, not recomputed
    again = run_json(capsys, "evaluate", "--mapping", str(path), "--json")
    assert again["latency_us"] == first["latency_us"]
    assert again == first


# ------------------------------------------------------------------ bad input
def write_mapping(tmp_path, text: str) -> str:
    path = tmp_path / "mapping.json"
    path.write_text(text)
    return str(path)


BAD_INPUT = [
    ("unknown network", ["--network", "nope"], "unknown network 'nope'"),
    ("bad network parameter", ["--network", "qubo:n=abc"], "n='abc' is not a int"),
    ("missing network file", ["--network", "absent.npz"], "does not exist"),
    ("unknown hardware", ["--network", SMALL, "--hardware", "loihi9"], "unknown hardware"),
    ("malformed mesh", ["--network", SMALL, "--hardware", "mesh:4x"], "malformed mesh spec"),
    ("unknown placer", ["--network", SMALL, "--placement", "diagonal"], "unknown placer"),
    ("unknown partitioner", ["--network", SMALL, "--partition", "best"], "unknown partitioner"),
    (
        "does not fit",
        ["--network", "sparse-mlp-2", "--hardware", "mesh:2x2x1"],
        "mesh:2x2x1 has 4",
    ),
    ("wrong core count", ["--network", SMALL, "--partition", "cores:1,2,3"], "3 core counts"),
    ("min+x", ["--network", SMALL, "--partition", "min+x"], "write min+K"),
    ("cores:a", ["--network", SMALL, "--partition", "cores:a,b"], "write cores:4,8,8"),
    ("too many cores", ["--network", SMALL, "--partition", "cores:17,1"], "cannot be split"),
    ("no natural split", ["--network", "mlp:widths=8-8", "--partition", "natural"], "natural"),
    ("pattern mismatch", ["--network", "mlp:widths=8-8-8", "--placement", "pairs-x"], "pairs-x"),
    ("mapping and partition", ["--mapping", "m.json", "--partition", "min"], "not both"),
]


@pytest.mark.parametrize(
    ("argv", "message"),
    [case[1:] for case in BAD_INPUT],
    ids=[case[0] for case in BAD_INPUT],
)
def test_bad_input_exits_2_with_one_line(capsys, tmp_path, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "evaluate", *argv)
    assert code == 2
    assert out == ""
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith("meshscope: error: ")
    assert message in err


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "{not json",
            "is not valid JSON (line 1: Expecting property name enclosed in double "
            "quotes); a mapping file is the JSON that 'meshscope map ... --save NAME.json' writes",
        ),
        ('{"format": "other"}', 'expected "format": "meshscope-mapping"'),
        (
            json.dumps(
                {
                    "format": "meshscope-mapping",
                    "version": 1,
                    "network": {"name": SMALL},
                    "hardware": {"name": "loihi2"},
                    "partition": {"cores_per_population": [2, 2]},
                    "placement": [[0, 0, 0, 0], [0, 0, 0, 1], [0, 0, 0, 2], [0, 0, 0]],
                }
            ),
            '"placement" must be a list',
        ),
        (
            json.dumps(
                {
                    "format": "meshscope-mapping",
                    "version": 1,
                    "network": {"name": SMALL},
                    "hardware": {"name": "loihi2"},
                    "partition": {"cores_per_population": ["two", 2]},
                    "placement": [],
                }
            ),
            '"partition" needs a list of integers',
        ),
        (
            json.dumps(
                {
                    "format": "meshscope-mapping",
                    "version": 1,
                    "network": {"name": SMALL},
                    "hardware": {"name": "loihi2"},
                    "partition": {"cores_per_population": [2, 2]},
                    "placement": [[0, 0, 0, 0], [0, 0, 0, 1], [0, 0, 0, 2], [0, 9, 0, 3]],
                }
            ),
            "does not exist on loihi2",
        ),
    ],
    ids=["not json", "wrong format", "short address", "text core count", "off the chip"],
)
def test_malformed_mapping_file_exits_2_with_one_line(capsys, tmp_path, text, message):
    path = write_mapping(tmp_path, text)
    code, out, err = run(capsys, "evaluate", "--mapping", path)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("meshscope: error: ")
    assert message in err and path in err


def test_mapping_of_another_network_exits_2(capsys, tmp_path):
    path = tmp_path / "saved.json"
    assert run(capsys, "evaluate", "--network", SMALL, "--save", str(path))[0] == 0
    code, _, err = run(capsys, "evaluate", "--mapping", str(path), "--network", "qubo:n=30")
    assert code == 2 and err.count("\n") == 1
    assert "fingerprint" in err and SMALL in err


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["frobnicate"],
        ["evaluate", "--bogus"],
        ["evaluate", "--seed", "abc"],
        ["list", "things"],
        ["evaluate", "--network"],
    ],
    ids=["no command", "unknown command", "unknown flag", "bad seed", "bad kind", "no value"],
)
def test_argparse_errors_exit_2_with_one_line(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("meshscope: error: ")
    assert "(see meshscope --help)" in err


# ------------------------------------------------------------------ one vocabulary, help
def _subparsers(parser):
    action = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return action.choices


def test_version_prints_the_installed_distribution_s(capsys):
    """The installed metadata's version, which is pyproject.toml's (else the install is stale)."""
    import tomllib
    from importlib.metadata import version

    code, out, err = run(capsys, "--version")
    assert (code, err) == (0, "")
    assert out == f"meshscope {version('meshscope')}\n"
    pyproject = tomllib.loads((Path(__file__).parents[3] / "pyproject.toml").read_text())
    assert version("meshscope") == pyproject["project"]["version"]


def test_every_option_of_every_subcommand_has_help():
    from engine.cli import build_parser
    from explorer.cli import add_serve

    for name, sub in _subparsers(build_parser([add_serve])).items():
        for action in sub._actions:
            if action.dest == "help":
                continue
            assert action.help, f"meshscope {name} {'/'.join(action.option_strings)} has no help"


def test_the_top_level_help_loads_no_engine_kernels():
    """``meshscope --help`` builds every command's name and one line, nothing more: no numpy,
    no numba (the families' full options load them); the lines are the full parser's."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from explorer.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('numpy', 'scipy', 'numba', 'engine.evaluation.cost')\n"
        "             if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
    from engine.cli import build_parser
    from explorer.cli import add_serve

    full = list(_subparsers(build_parser([add_serve])))
    assert list(_subparsers(build_parser([add_serve], ["--help"]))) == full
    whole = build_parser([add_serve]).format_help()
    assert build_parser([add_serve], ["--help"]).format_help() == whole


def test_partition_and_placement_name_the_same_options_everywhere(capsys):
    """map and evaluate both say --partition/--placement; --partitioner/--placer are aliases."""
    net = "rand:n=600,card=16"
    a = run_json(capsys, "map", "--network", net, "--hardware", "hypergraph-small",
                 "--partition", "sequential", "--placement", "hilbert", "--json")  # fmt: skip
    b = run_json(capsys, "map", "--network", net, "--hardware", "hypergraph-small",
                 "--partitioner", "sequential", "--placer", "hilbert", "--json")  # fmt: skip
    assert (a["partitioner"], a["placer"]) == ("sequential", "hilbert")
    assert {k: v for k, v in a.items() if k != "seconds"} == {
        k: v for k, v in b.items() if k != "seconds"
    }
    c = run_json(capsys, "evaluate", "--network", net, "--hardware", "hypergraph-small",
                 "--partitioner", "sequential", "--placer", "hilbert", "--json")  # fmt: skip
    assert c["latency_us"] == a["latency_us"]


def test_map_defaults_to_overlap_and_spectral_force(capsys):
    data = run_json(capsys, "map", "--network", "rand:n=600,card=16", "--hardware",
                    "hypergraph-small", "--json")  # fmt: skip
    assert (data["partitioner"], data["placer"]) == ("overlap", "spectral+force")
    assert set(data["seconds"]) == {"partition", "partition_graph", "place", "evaluate"}


# ------------------------------------------------------------------ progress on a terminal
@pytest.mark.parametrize(
    ("argv", "shown"),
    [
        (["evolve", "--network", SMALL, "--budget", "12"], "/12 ["),
        (
            ["map", "--network", "rand:n=600,card=16", "--hardware", "hypergraph-small"],
            "partition…",
        ),
        (
            [
                "map",
                "--network",
                "rand:n=600,card=16",
                "--hardware",
                "hypergraph-small",
                "--partition",
                "overlap",
            ],
            "partition… 100%",  # the partitioner's own report, on the step's bar
        ),
        (["convert", "--network", SMALL, "--out", "net.hgr"], "read network…"),
    ],
    ids=["evolve", "map", "map-overlap", "convert"],
)
def test_long_work_shows_a_bar_on_a_terminal_and_nothing_when_piped(tmp_path, argv, shown):
    code, terminal = run_on_a_terminal(argv, tmp_path)
    assert code == 0, terminal
    assert shown in terminal and "█" in terminal  # a tqdm bar was drawn
    script = Path(sys.executable).with_name("meshscope")
    piped = subprocess.run([str(script), *argv], capture_output=True, text=True, cwd=tmp_path,
                           timeout=120)  # fmt: skip
    assert piped.returncode == 0 and piped.stderr == ""


def test_the_first_compilation_is_announced():
    import numba

    from engine.kernels import NOTICE, compiling_notice

    @numba.njit  # a kernel nobody compiled yet (no cache: it lives only in this test)
    def add_one(x):
        return x + 1

    said = []
    with compiling_notice(said.append):
        assert add_one(1) == 2
        assert add_one(2) == 3  # compiled once: said once
    assert said == [NOTICE]
    with compiling_notice(said.append):
        add_one(3)  # nothing compiles: nothing said
    assert said == [NOTICE]


def test_evaluate_flows_names_what_makes_the_heaviest_link_hot(capsys):
    args = ["evaluate", "--network", "mlp:widths=64-256-128-32", "--hardware", "loihi2"]
    code, out, err = run(capsys, *args, "--flows", "max", "--json")
    assert code == 0, err
    d = json.loads(out)
    flows = d["flows"]
    assert flows["messages"] == pytest.approx(d["max_link_messages"])
    assert sum(f["messages"] for f in flows["flows"]) == pytest.approx(flows["messages"])
    # the same link by its name, as a table
    code, text, _ = run(capsys, *args, "--flows", flows["link"])
    assert code == 0 and f"flows through {flows['link']}" in text
    rows = text.split("msgs/step  share hops\n", 1)[1].splitlines()
    assert len(rows) == len(flows["flows"])  # a row per flow, in the JSON's order
    for row, f in zip(rows, flows["flows"], strict=True):
        cells = row.split()
        assert cells[-3:] == [f"{f['messages']:.1f}", f"{f['share']:.1%}", str(f["hops"])]
        assert row.lstrip().startswith(f["src_layer"]) and f" {f['dst_layer']} " in row


def test_evaluate_flows_list_both_routes_under_o1turn(capsys, tmp_path):
    """Hardware routed O1TURN (its preset's ``[noc] routing``): the heaviest link's flows are
    the routes that cross it, each flow half X then Y and half Y then X, named in a column."""
    preset = Path(__file__).resolve().parents[3] / "engine" / "presets" / "loihi2.toml"
    path = tmp_path / "loihi2-o1turn.toml"
    path.write_text(preset.read_text().replace('routing = { value = "xy"',
                                               'routing = { value = "o1turn"'))  # fmt: skip
    args = ["evaluate", "--network", "mlp:widths=64-256-128-32", "--hardware", str(path)]
    code, out, err = run(capsys, *args, "--flows", "max", "--json")
    assert code == 0, err
    d = json.loads(out)
    flows = d["flows"]
    assert flows["routing"] == "o1turn" and {f["route"] for f in flows["flows"]} <= {"xy", "yx"}
    assert sum(f["messages"] for f in flows["flows"]) == pytest.approx(flows["messages"])
    code, text, _ = run(capsys, *args, "--flows", flows["link"])
    assert code == 0
    rows = text.split("msgs/step  share hops  route\n", 1)[1].splitlines()
    assert len(rows) == len(flows["flows"])
    names = {"xy": "X then Y", "yx": "Y then X"}
    for row, f in zip(rows, flows["flows"], strict=True):
        assert row.endswith(f"{f['hops']:>4}  {names[f['route']]}")


@pytest.mark.parametrize("value", ["N (0,0)", "nowhere", "core 99999 in"])
def test_evaluate_flows_of_a_bad_link_is_one_line(capsys, value):
    code, out, err = run(capsys, "evaluate", "--network", SMALL, "--flows", value)
    assert code == 2 and out == "" and err.count("\n") == 1


def test_evolve_starts_from_a_given_mapping_file(capsys, tmp_path):
    """The best mapping of one run, given as --start to the next, is that run's first
    evaluation, and the new run ends no worse than it."""
    first = tmp_path / "first.json"
    run_json(capsys, "evolve", "--network", "mlp:widths=256-512-256-10", "--hardware",
             "mesh:2x2x4", "--budget", "12", "--out", str(first), "--json")  # fmt: skip
    start_us = json.loads(first.read_text())["evaluation"]["latency_us"]
    history = tmp_path / "h.jsonl"
    data = run_json(capsys, "evolve", "--network", "mlp:widths=256-512-256-10", "--hardware",
                    "mesh:2x2x4", "--budget", "12", "--seed", "5", "--start", str(first),
                    "--history", str(history), "--json")  # fmt: skip
    run, opening = map(json.loads, history.read_text().splitlines()[:2])  # the run, a record
    assert run["run"] == "evolve" and run["settings"]["seed"] == 5
    assert opening["note"] == "start" and opening["latency_us"] == pytest.approx(start_us)
    assert data["heuristics"]["start"] == pytest.approx(start_us)
    assert data["best"]["latency_us"] <= start_us + 1e-9


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--strategy", "chipwise"], ["global strategy"]),
        (["--resume", "RUN"], ["--start", "--resume"]),
    ],
)
def test_evolve_start_refuses_what_it_cannot_do(capsys, tmp_path, extra, words):
    start = tmp_path / "m.json"
    code, _, err = run(capsys, "evaluate", "--network", SMALL, "--hardware", "mesh:2x2x4",
                       "--save", str(start))  # fmt: skip
    assert code == 0, err
    extra = [str(tmp_path / "run.ckpt") if a == "RUN" else a for a in extra]
    if "--resume" in extra:
        (tmp_path / "run.ckpt").write_text("{}\n")
    code, out, err = run(capsys, "evolve", "--network", SMALL, "--hardware", "mesh:2x2x4",
                         "--budget", "5", "--start", str(start), *extra)  # fmt: skip
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and all(w in err for w in words), err


# ------------------------------------------------------------------ what reaches the terminal
EVIL = "\x1b[31mred\x1b]0;title\x07\rback\nbest: latency 0.001 us (forged)\u202egnp.exe"
CONTROLS = [chr(c) for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))] + ["\u202e", "\u2028"]


@pytest.fixture(scope="module")
def evil_files(tmp_path_factory):
    """A network file whose name, description and population names, and a hardware file
    whose name and description, hold terminal control codes and a forged line."""
    import dataclasses

    from engine.io.network_file import save_network

    folder = tmp_path_factory.mktemp("evil")
    network = load_network_spec(SMALL)
    network = dataclasses.replace(
        network, name=f"net{EVIL}", description=f"about{EVIL}",
        population_names=tuple(f"p{k}{EVIL}" for k in range(network.n_populations)),
    )  # fmt: skip
    save_network(network, folder / "evil.npz")
    preset = (Path(__file__).parents[3] / "engine/presets/loihi2.toml").read_text()
    escaped = json.dumps(EVIL)[1:-1]  # a TOML basic string escapes as JSON does
    preset = preset.replace('name = "loihi2"', f'name = "hw{escaped}"', 1)
    preset = preset.replace('description = "one', f'description = "{escaped} one', 1)
    (folder / "evil.toml").write_text(preset)
    script = folder / "evaluator.py"  # an evaluator whose failure says the same
    note = EVIL.replace("\n", " ").replace("\r", " ")  # (a note: the last line printed)
    script.write_text(f"import sys\nsys.stdin.read()\nsys.exit('net' + {note!r})\n")
    return folder


SHOWN = [  # every command that prints names read from files (or a message that does)
    ["info", "--network", "{net}"],
    ["info", "--network", "{net}", "--json"],
    ["evaluate", "--network", "{net}", "--hardware", "{hw}"],
    ["evaluate", "--network", "{net}", "--hardware", "{hw}", "--stages", "--links"],
    ["map", "--network", "{net}", "--hardware", "{hw}", "--partition", "min"],
    ["simulate", "--network", "{net}", "--hardware", "{hw}"],
    ["convert", "--network", "{net}", "--out", "{dir}/out.npz"],
    ["list", "--hardware", "{hw}", "--constants"],
    ["evolve", "--network", "{net}", "--hardware", "{hw}", "--budget", "6"],
    ["pareto", "--network", "{net}", "--hardware", "{hw}", "--budget", "6"],
    ["evolve", "--network", "{net}", "--budget", "3", "--evaluator-cmd", "{python} {script}"],
    ["evaluate", "--network", "{net}", "--partition", "cores:1,1,1,1,1"],  # an error
]


@pytest.mark.parametrize("argv", SHOWN, ids=[" ".join(a[:2] + a[-1:]) for a in SHOWN])
def test_no_name_read_from_a_file_controls_the_terminal_or_forges_a_line(capsys, evil_files,
                                                                          argv):  # fmt: skip
    """``meta.name`` holding ESC sequences and newlines reached the terminal raw."""
    paths = {"net": evil_files / "evil.npz", "hw": evil_files / "evil.toml", "dir": evil_files,
             "python": sys.executable, "script": evil_files / "evaluator.py"}  # fmt: skip
    code, out, err = run(capsys, *[a.format(**paths) for a in argv])
    shown = out + err
    assert "net" in shown or "hw" in shown or "p0" in shown  # the names are shown …
    assert not [c for c in CONTROLS if c in shown.replace("\n", "")], shown  # … harmless
    lines = shown.splitlines()
    assert not any(line.lstrip().startswith("best: latency 0.001") for line in lines)
    assert "\\x1b[31mred" in shown or "\\u001b[31mred" in shown  # escaped, not dropped
    if "--json" in argv:
        assert json.loads(out)["network"] == f"net{EVIL}"  # JSON keeps the name as it is


def test_a_spec_of_5000_digits_is_not_echoed_whole(capsys):
    code, out, err = run(capsys, "info", "--network", "sparse-mlp-1:seed=" + "9" * 5000)
    assert code == 2 and out == "" and err.count("\n") == 1, err[:300]
    assert len(err) < 600 and "9" * 300 not in err and "chars)" in err


def test_an_argument_of_5000_characters_is_not_echoed_whole(capsys):
    code, _, err = run(capsys, "evolve", "--budget", "9" * 5000)
    assert code == 2 and err.count("\n") == 1 and len(err) < 600, err[:300]


def test_evaluate_flows_name_routers_and_cores_in_one_notation_on_a_board(capsys):
    """On loihi2-x8 (4×8-router chips, 4×2 of them): routers by global (x,y), cores
    (x,y):slot, in the text and the JSON alike, and the link's chips named once."""
    import re

    from engine.hardware import load_hardware

    hw = load_hardware("loihi2-x8")
    args = ["evaluate", "--network", "mlp:widths=64-256-128-32", "--hardware", "loihi2-x8",
            "--placement", "spread-col"]  # fmt: skip
    code, out, err = run(capsys, *args, "--flows", "max", "--json")
    assert code == 0, err
    flows = json.loads(out)["flows"]
    core = re.compile(r"^\((\d+),(\d+)\):(\d+)$")
    assert flows["flows"]
    for f in flows["flows"]:
        for end in ("src", "dst"):
            x, y, slot = (int(v) for v in core.match(f[f"{end}_core"]).groups())
            chip = (y // hw.height) * hw.chips_x + x // hw.width
            assert f[f"{end}_chip"] == chip and slot < hw.cores_per_router
    # Loihi 2's two meshes: each one's messages on the link, the busier timing it
    assert len(flows["mesh_messages"]) == 2
    assert sum(flows["mesh_messages"]) == pytest.approx(flows["messages"])
    code, text, _ = run(capsys, *args, "--flows", flows["link"])
    assert code == 0
    assert f"flows through {flows['link']} (link {flows['id']}, {flows['chips']})" in text
    m0, m1 = flows["mesh_messages"]
    assert f"per mesh: {m0:.1f} on mesh 0, {m1:.1f} on mesh 1" in text
    rows = text.split("msgs/step  share hops\n", 1)[1].splitlines()
    for row, f in zip(rows, flows["flows"], strict=True):
        assert f" {f['src_core']} " in row and f" {f['dst_core']} " in row
    # an off-chip link between chips 0 and 1, by the routers' global coordinates
    code, out, _ = run(capsys, *args, "--flows", "E (3,0)->(4,0)", "--json")
    assert code == 0
    d = json.loads(out)["flows"]
    assert d["link"] == "E (3,0)->(4,0)" and d["chips"] == "chip 0 -> chip 1"
