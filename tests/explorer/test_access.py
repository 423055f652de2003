"""The explorer as a network service: what a client may name, and how much it may ask for.

Every refused request is a ``MeshScopeError`` (a notification on the page) and leaves the
session as it was; a refused path reads the same whether or not the file exists.
"""

from __future__ import annotations

import io
import json
import os
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.errors import CapacityError, InputFileError, MeshScopeError, SpecError
from engine.io.network_file import save_network
from engine.mapping.assignment import mapping_to_dict
from engine.search import ESConfig
from engine.specs import demo_path, load_network_spec
from explorer.access import ClientAccess, ClientLimits, looks_like_path
from explorer.cli import main
from explorer.runner import SearchRunner
from explorer.state import ExplorerState
from tests.explorer.conftest import SMALL_NETWORK
from tests.support.files import FifoWatch
from tests.support.nir_files import BROKEN as NIR_BROKEN
from tests.support.nir_files import DATA as NIR_DATA


@pytest.fixture
def client() -> ExplorerState:
    """A session of a server started with the small network on Loihi 2."""
    access = ClientAccess.for_server((SMALL_NETWORK, "loihi2", None))
    return ExplorerState.from_specs(SMALL_NETWORK, "loihi2", access=access)


def unchanged(state: ExplorerState):
    """What must stay as it was after a refused request."""
    return (
        state.network.name,
        state.hardware.name,
        state.shown.revision,
        state.inputs.mapping_path,
    )


@pytest.fixture
def secret(tmp_path):
    """A network file and a hardware file on the server's disk, outside every allowed folder."""
    save_network(load_network_spec("linear-dense:M=2,N=8"), tmp_path / "secret.npz")
    (tmp_path / "secret.toml").write_text('name = "x"\n')
    return tmp_path


# ------------------------------------------------------------------ names
@pytest.mark.parametrize("kind", ["network", "hardware"])
def test_a_client_cannot_open_a_server_file_by_typing_its_path(client, secret, kind):
    before = unchanged(client)
    suffix = ".npz" if kind == "network" else ".toml"
    messages = []
    for path in (secret / f"secret{suffix}", secret / f"missing{suffix}"):
        args = (str(path), "loihi2") if kind == "network" else (SMALL_NETWORK, str(path))
        with pytest.raises(SpecError, match="opens no files") as e:
            client.load(*args)
        messages.append(str(e.value).replace(path.name, "NAME"))
        assert unchanged(client) == before
    assert messages[0] == messages[1]  # nothing tells whether the file exists


@pytest.mark.parametrize(
    "spec", ["/etc/passwd", "../../etc/passwd", "~/x.npz", "./secret.npz", "C:\\x.npz"]
)
def test_every_path_form_is_a_path(spec):
    assert looks_like_path(spec)
    with pytest.raises(SpecError, match="opens no files"):
        ClientAccess().network(spec)


def test_an_uploaded_mapping_cannot_name_a_server_file(client, secret):
    """A mapping file whose network is a path on the server's disk does not open it."""
    doc = json.loads(client.mapping_json())
    doc["network"]["name"] = str(secret / "secret.npz")
    doc["network"]["fingerprint"] = "another network"
    before = unchanged(client)
    with pytest.raises(SpecError, match="opens no files"):
        client.upload("m.json", json.dumps(doc).encode())
    assert unchanged(client) == before


def test_hardware_presets_are_names_not_paths():
    """A preset name is looked up among the presets; '..' cannot climb out of them."""
    with pytest.raises(MeshScopeError, match="unknown hardware"):
        ExplorerState.from_specs(SMALL_NETWORK, "../presets/loihi2", access=ClientAccess.local())


def test_files_given_at_start_and_allowed_folders_are_open(secret, tmp_path_factory):
    other = tmp_path_factory.mktemp("other")
    save_network(load_network_spec("linear-dense:M=2,N=8"), other / "net.npz")
    started = str(secret / "secret.npz")
    access = ClientAccess.for_server((started, "loihi2", None), allow_files=[str(other)])
    assert access.network(started) == started  # what the server was started with
    assert access.network(str(other / "net.npz"))  # under --allow-files
    state = ExplorerState.from_specs(started, "loihi2", access=access)
    state.load(str(other / "net.npz"), "loihi2")
    assert state.network.n_neurons == 32
    save_network(load_network_spec("linear-dense:M=2,N=8"), secret / "another.npz")
    with pytest.raises(SpecError, match="opens no files"):  # '..' out of the folder
        access.network(str(other / ".." / secret.name / "another.npz"))
    with pytest.raises(SpecError, match="opens no files"):  # beside a file given at start
        access.hardware(str(secret / "secret.toml"))
    link = other / "link.npz"
    os.symlink(secret / "another.npz", link)  # a link out of the folder leads nowhere
    with pytest.raises(SpecError, match="opens no files"):
        access.network(str(link))


def test_an_allowed_folder_must_exist():
    with pytest.raises(SpecError, match="not a folder"):
        ClientAccess.for_server(allow_files=["/nonexistent/folder"])


def test_demo_files_and_registry_names_are_open(client):
    client.load("conv-snn-16.npz", "loihi2")
    assert client.network.n_neurons > 0
    client.load("qubo:n=200", "mesh:4x4x2")
    assert client.hardware.n_cores == 32
    with pytest.raises(MeshScopeError, match="unknown network"):
        client.load("no-such-workload", "loihi2")


# ------------------------------------------------------------------ limits
@pytest.mark.parametrize(
    ("network", "hardware", "says"),
    [
        (SMALL_NETWORK, "mesh:1000x1000", "1,000,000 cores"),
        (SMALL_NETWORK, "mesh:64x64x2", "8,192 cores"),
        ("rand:n=10000000,card=100", "loihi2", "10,000,000 neurons"),
        ("linear-dense:M=64,N=256", "loihi2", "268,435,456 synapses"),
        ("mlp:widths=100000-100000", "loihi2", "synapses"),
    ],
)
def test_a_client_asking_for_too_much_is_told_before_anything_is_built(
    client, network, hardware, says
):
    before = unchanged(client)
    with pytest.raises(CapacityError, match=says):
        client.load(network, hardware)
    assert unchanged(client) == before


def test_the_server_start_is_exempt_from_the_limits():
    tight = ClientLimits(cores=10)
    access = ClientAccess.for_server((SMALL_NETWORK, "loihi2", None), limits=tight)
    assert ExplorerState.from_specs(SMALL_NETWORK, "loihi2", access=access).hardware.n_cores > 10
    state = ExplorerState.from_specs(SMALL_NETWORK, "loihi2", access=access)
    with pytest.raises(CapacityError):  # … but not a client's choice of the same kind
        state.load(SMALL_NETWORK, "loihi2-x8")


def test_an_uploaded_network_over_the_limits_is_refused(client, tmp_path):
    path = tmp_path / "big.npz"
    save_network(load_network_spec("rand:n=3000,card=8"), path)
    small = ClientAccess(ClientLimits(neurons=1000))
    state = ExplorerState.from_specs(SMALL_NETWORK, "loihi2", access=small)
    before = unchanged(state)
    with pytest.raises(CapacityError, match="3,000 neurons"):
        state.upload("big.npz", path.read_bytes())
    assert unchanged(state) == before


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("lie.hgr", b"1 20000000\n1 2\n"),  # 15 bytes declaring 20 M vertices
        ("lie.hgr", b"1 200000000\n1 2\n"),
    ],
)
def test_an_uploaded_header_declaring_more_than_the_client_may_load_is_refused_unbuilt(
    client, name, data
):
    """A header is checked against the client's limits (200,000 neurons), not the command
    line's, before anything of its declared size is allocated."""
    import tracemalloc

    before = unchanged(client)
    tracemalloc.start()
    try:
        with pytest.raises(MeshScopeError) as info:
            client.upload(name, data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "200,000" in str(info.value) and name in str(info.value)
    assert peak < 8 * 2**20 and unchanged(client) == before


def test_a_demo_name_is_the_demo_file_whatever_lies_in_the_servers_folder(
    client, tmp_path, monkeypatch
):
    """A client naming a demo gets the shipped file, not a file of the same name in the
    server's working folder (which the client could not have named by its path)."""
    save_network(load_network_spec("linear-dense:M=2,N=8"), tmp_path / "qubo-1000.npz")
    monkeypatch.chdir(tmp_path)
    client.load("qubo-1000.npz", "loihi2")
    assert client.network.name.startswith("qubo") and client.inputs.network_spec == "qubo-1000.npz"


@pytest.fixture
def decoy(tmp_path, monkeypatch):
    """A file named as a demo in the server's working folder, holding another network:
    (the demo's name, the shipped demo's fingerprint)."""
    save_network(load_network_spec("linear-dense:M=2,N=8"), tmp_path / "qubo-1000.npz")
    shipped = load_network_spec(demo_path("qubo-1000.npz"))
    monkeypatch.chdir(tmp_path)
    return "qubo-1000.npz", shipped.fingerprint


def test_a_demo_name_inside_an_uploaded_mapping_is_the_shipped_demo(client, decoy):
    """The names inside an uploaded mapping file resolve as the client's names do: a demo's
    name is the shipped file, not the working folder's (whose name and fingerprint the
    notification would have shown)."""
    name, fingerprint = decoy
    shipped = ExplorerState.from_specs(demo_path(name), "loihi2", access=ClientAccess.local())
    doc = mapping_to_dict(shipped.network, shipped.hardware, shipped.mapping)
    doc["network"]["name"] = name
    assert client.upload("m.json", json.dumps(doc).encode()) == "mapping"
    assert client.network.fingerprint == fingerprint


def test_a_demo_name_in_the_mosaic_tab_is_the_shipped_demo(decoy):
    """The shipped qubo-1000 fits no Mosaic (its message names it); the working folder's
    decoy of the same name, 16 neurons, would have loaded."""
    from explorer.views.mosaic import compute_mosaic

    name, _ = decoy
    access = ClientAccess.for_server((SMALL_NETWORK, "loihi2", None))
    with pytest.raises(MeshScopeError, match="qubo:n=1000"):
        compute_mosaic(source="network spec", spec=name, access=access)


def test_a_restored_session_of_a_demo_is_the_shipped_demo(client, decoy):
    name, fingerprint = decoy
    access = ClientAccess.for_server((SMALL_NETWORK, "loihi2", None))
    with_demo = ExplorerState.from_specs(demo_path(name), "loihi2", access=ClientAccess.local())
    snap = {**with_demo.snapshot(), "network_spec": name}
    restored = ExplorerState(access=access)
    restored.restore(snap)
    assert restored.network.fingerprint == fingerprint


def test_an_upload_over_the_size_limit_is_refused_unread(client):
    state = ExplorerState.from_specs(
        SMALL_NETWORK, "loihi2", access=ClientAccess(ClientLimits(upload_bytes=1000))
    )
    with pytest.raises(CapacityError, match="uploads of at most"):
        state.upload("m.json", b" " * 1001)
    with pytest.raises(CapacityError, match="uploads of at most"):
        state.set_reference("file", filename="m.json", data=b" " * 1001)


def test_a_search_over_the_budget_limit_is_refused(client):
    runner = SearchRunner(client)
    with pytest.raises(CapacityError, match="at most 20,000"):
        runner.start(ESConfig(budget=20_001))
    assert not client.search.running


def test_a_simulated_search_is_bounded_by_the_cycle_limit():
    """A step that needs more cycles than a client may ask for fails its evaluation: the
    search ends with no result instead of running for hours."""
    access = ClientAccess(ClientLimits(cycles=50))
    state = ExplorerState.from_specs(SMALL_NETWORK, "loihi2", access=access)
    runner = SearchRunner(state)
    runner.start(ESConfig(budget=6, objective="simulated-latency"))
    runner.join(120)
    assert not state.search.running
    assert state.search.best is None
    assert state.search.error.startswith("no evaluation succeeded")
    assert "did not finish within 50 cycles" in state.search.error


# ------------------------------------------------------------------ uploads
def _npz(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("empty.npz", b""),
        ("empty-archive.npz", _npz()),
        ("wrong-arrays.npz", _npz(indptr=np.array([0, 5]), indices=np.array([7.5]))),
        ("garbage.npz", b"PK\x03\x04" + bytes(range(256)) * 4),
        ("garbage.hgr", b"\xff\xfe 3 x\n1 2\n"),
        ("list.json", b"[1, 2, 3]"),
        ("deep.json", b"[" * 100_000 + b"]" * 100_000),
        ("latin1.json", '{"network": "\xe9"}'.encode("latin-1")),
        (
            "huge-int.json",
            b'{"format": "meshscope-mapping", "placement": [[99999999999999999999]]}',
        ),
        ("notes.txt", b"hello"),
        ("garbage.nir", b"\x89HDF\r\n\x1a\n" + bytes(range(256)) * 4),
        ("text.nir", b"Input -> LIF"),
        ("missing-node.nir", (NIR_DATA / NIR_BROKEN[0]).read_bytes()),
    ],
)
def test_a_broken_upload_is_a_clear_error_and_changes_nothing(client, name, data):
    before = unchanged(client)
    with pytest.raises(MeshScopeError) as e:
        client.upload(name, data)
    assert name in str(e.value) or "mapping" in str(e.value)
    assert unchanged(client) == before


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.binary(max_size=600), suffix=st.sampled_from([".npz", ".hgr", ".json", ".nir"]))
def test_any_bytes_uploaded_are_loaded_or_refused_with_the_projects_error(client, data, suffix):
    before = unchanged(client)
    try:
        client.upload("f" + suffix, data)
    except MeshScopeError:
        assert unchanged(client) == before


def test_a_good_upload_still_loads(client):
    doc = mapping_to_dict(client.network, client.hardware, client.mapping)
    doc["placement"] = doc["placement"][::-1]
    assert client.upload("m.json", json.dumps(doc).encode()) == "mapping"


def test_a_nir_graph_uploads_within_the_clients_synapses():
    data = (NIR_DATA / "paper_02_cnn_cnn_sinabs.nir").read_bytes()
    small = ExplorerState.from_specs(
        SMALL_NETWORK, "loihi2", access=ClientAccess(ClientLimits(synapses=100_000))
    )
    before = unchanged(small)
    with pytest.raises(InputFileError, match="more than 100,000"):  # refused while expanding
        small.upload("cnn.nir", data)
    assert unchanged(small) == before
    state = ExplorerState.from_specs(SMALL_NETWORK, "loihi2")
    assert state.upload("cnn.nir", data) == "network"
    assert state.network.population_names[0] == "input" and state.network.spike_source[0]
    assert state.network.n_synapses == 1_122_848


# ------------------------------------------------------------------ serve's options
def test_listening_everywhere_needs_named_origins(capsys):
    code = main(["serve", "--address", "0.0.0.0", "--port", "5999", "--no-browser"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--allow-origin" in err


def test_allow_files_must_name_a_folder(capsys):
    code = main(["serve", "--allow-files", "/nonexistent/dir", "--no-browser"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "not a folder" in err


def test_a_large_convolution_uploads_structured(tmp_path):
    """A conv over the client's synapse limit loads as a description, maps with the layer
    partition and splits in tiles; its neurons still count against the client's limit."""
    from tests.support.nir_files import big_conv

    data = big_conv(tmp_path, channels=16, side=48).read_bytes()
    access = ClientAccess(ClientLimits(synapses=1_000_000))
    state = ExplorerState.from_specs(SMALL_NETWORK, "mesh:8x8x4", access=access)
    assert state.upload("conv.nir", data) == "network"
    net = state.network
    assert net.projections and net.n_synapses == 16 * 16 * (47 + 48 + 47) ** 2  # 5.2 M
    assert state.mapping.partition.split == ("channels", "tiles")
    few = ExplorerState.from_specs(
        SMALL_NETWORK, "mesh:8x8x4", access=ClientAccess(ClientLimits(neurons=50_000))
    )
    before = unchanged(few)
    with pytest.raises(CapacityError, match="73,728 neurons"):
        few.upload("conv.nir", data)
    assert unchanged(few) == before


def test_the_partition_menu_splits_a_conv_layer(tmp_path):
    """``min@rows`` from the sidebar's choices splits the conv's layer by rows; the same
    network's default splits it in tiles."""
    from explorer.views.controls import partition_choices
    from tests.support.nir_files import big_conv

    path = str(big_conv(tmp_path, channels=16, side=48))
    assert "min@rows" in partition_choices().values()
    access = ClientAccess.for_server(allow_files=[tmp_path])
    state = ExplorerState.from_specs(path, "mesh:8x8x4", access=access)
    assert state.mapping.partition.split == ("channels", "tiles")
    tiles = state.evaluation.latency_us
    state.load(path, "mesh:8x8x4", partition_spec="min@rows")
    assert state.mapping.partition.split == ("rows", "rows")
    assert tiles < state.evaluation.latency_us


# ------------------------------------------------------------------ every entry point
@pytest.fixture
def server_paths(tmp_path):
    """Paths of the server's disk that a client names: a file (a partition file that
    would be read), a missing one, one nobody may read, /etc/shadow, a folder, a FIFO."""
    (tmp_path / "secret").write_text("0\n" * 10)
    locked = tmp_path / "locked"
    locked.write_text("0\n")
    locked.chmod(0)
    (tmp_path / "folder").mkdir()
    fifo = FifoWatch(tmp_path / "fifo")
    yield [str(tmp_path / n) for n in ("secret", "missing", "locked", "folder", "fifo")] + [
        "/etc/shadow"
    ]
    fifo.close()
    assert not fifo.opened, "the server opened a FIFO a client named"


def _error(action, *args, **kwargs) -> str:
    try:
        action(*args, **kwargs)
    except MeshScopeError as e:
        return str(e)
    pytest.fail(f"{action.__name__} took what a client named")


def _mapping_naming(state: ExplorerState, **names) -> bytes:
    doc = json.loads(state.mapping_json())
    for what, name in names.items():
        doc[what] = {"name": name, "fingerprint": "another one"}
    return json.dumps(doc).encode()


def _scene(**fields):
    from explorer.scenes import Scene

    names = {"network": SMALL_NETWORK, "hardware": "loihi2", **fields}
    return Scene(title="Sneaky", text="Reads a file. On the server.", kind="mapping", **names)


def _traffic_says(state, load) -> str:
    """What the Traffic tab notifies when ``load(view)`` is done."""
    from explorer.views import _page, traffic, traffic_scenes

    said = []

    def hear(message, notify=None):
        said.append(" ".join(str(message).split()))

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_page, "notify_error", hear)
        mp.setattr(traffic, "notify_error", hear)
        mp.setattr(traffic_scenes, "notify_error", hear)
        load(traffic_scenes.TrafficTab(state).scenes)
    assert len(said) == 1, said
    return said[0]


def _scene_file(state, scene_or_data, name: str = "scene.json") -> str:
    """What the Traffic tab says of a scene file (a ``Scene``, or the file's bytes)."""
    data = scene_or_data
    if not isinstance(data, bytes):
        data = json.dumps(scene_or_data.to_dict()).encode()

    def choose(view):
        view._scene_upload.param.update(filename=name, value=data)  # what the page sends

    return _traffic_says(state, choose)


def _scene_link(state, scene) -> str:
    from explorer.scenes import encode_scene, scene_from_arg

    return _traffic_says(state, lambda view: view.load_scene(scene_from_arg(encode_scene(scene))))


def _sidebar(state, box: str, spec: str) -> str:
    from explorer.views.controls import ControlsView

    said = []
    view = ControlsView(state=state, notify=said.append)
    getattr(view, box).value = spec
    assert not view.load()
    return said[0]


def _mosaic(state, **inputs) -> str:
    from explorer.views.mosaic import SOURCES, compute_mosaic

    return _error(compute_mosaic, source=SOURCES[1], access=state.access, **inputs)


def _reload(state, **specs) -> str:
    snap = {**state.snapshot(), **specs}
    return _error(ExplorerState(access=state.access).restore, snap)


ENTRIES = {  # where a client's spec enters → what the client hears of a path PATH
    "network box": lambda s, p: _error(s.load, p, "loihi2"),
    "hardware box": lambda s, p: _error(s.load, SMALL_NETWORK, p),
    "hardware box, resized": lambda s, p: _error(s.load, SMALL_NETWORK, f"{p}@2x2"),
    "partition box": lambda s, p: _error(
        s.load, SMALL_NETWORK, "loihi2", partition_spec=f"file:{p}"
    ),
    "sidebar network": lambda s, p: _sidebar(s, "network_text", p),
    "sidebar hardware": lambda s, p: _sidebar(s, "hardware_text", f"{p}@4x4"),
    "uploaded mapping's network": lambda s, p: _error(
        s.upload, "m.json", _mapping_naming(s, network=p)
    ),
    "uploaded mapping's hardware": lambda s, p: _error(
        s.upload, "m.json", _mapping_naming(s, hardware=p)
    ),
    "reference mapping's network": lambda s, p: _error(
        s.set_reference, "file", filename="m.json", data=_mapping_naming(s, network=p)
    ),
    "scene file's partition": lambda s, p: _scene_file(s, _scene(partition=f"file:{p}")),
    "scene file's network": lambda s, p: _scene_file(s, _scene(network=p)),
    "scene file's hardware": lambda s, p: _scene_file(s, _scene(hardware=p)),
    "scene link's partition": lambda s, p: _scene_link(s, _scene(partition=f"file:{p}")),
    "scene link's network": lambda s, p: _scene_link(s, _scene(network=p)),
    "Mosaic's network spec": lambda s, p: _mosaic(s, spec=p),
    "Mosaic's preset": lambda s, p: _mosaic(s, preset=p),
    "a reload's network": lambda s, p: _reload(s, network_spec=p),
    "a reload's partition": lambda s, p: _reload(s, partition_spec=f"file:{p}"),
}


@pytest.mark.parametrize("entry", list(ENTRIES))
def test_a_path_a_client_names_anywhere_gets_one_answer_whatever_is_there(
    client, server_paths, entry
):
    """Every spec a client sends goes through the session's access rule: a file, a missing
    one, an unreadable one, a folder, a FIFO and /etc/shadow read alike, and nothing is
    opened (the FIFO says so) or changed."""
    before = unchanged(client)
    answers = {p: ENTRIES[entry](client, p).replace(p, "PATH") for p in server_paths}
    assert len(set(answers.values())) == 1, answers
    answer = answers[server_paths[0]]
    assert "PATH" in answer and len(answer.splitlines()) == 1
    if "reference" not in entry:  # (a reference is built on the session's own network)
        assert "opens no files" in answer
    assert unchanged(client) == before


def test_an_unknown_placer_is_refused_before_any_work(client):
    before = unchanged(client)
    with pytest.raises(MeshScopeError, match="unknown placer 'nowhere'"):
        client.load(SMALL_NETWORK, "loihi2", placer="spectral+nowhere")
    with pytest.raises(MeshScopeError, match="unknown placer"):
        ClientAccess().scene(_scene(compare=("packed-row", "/etc/passwd")))
    assert unchanged(client) == before


def test_an_allowed_folder_opens_regular_files_only(tmp_path):
    """Under --allow-files a client may name files, never a FIFO (opening it blocks), a
    folder, a device or a system file — not even through a link."""
    fifo = FifoWatch(tmp_path / "fifo")
    (tmp_path / "folder").mkdir()
    blocks = np.repeat([0, 1, 2, 3], [64, 128, 32, 10])  # the small network's layers
    (tmp_path / "part").write_text("".join(f"{b}\n" for b in blocks))
    os.symlink(tmp_path / "fifo", tmp_path / "link")
    access = ClientAccess.for_server((SMALL_NETWORK, "loihi2", None), allow_files=[tmp_path])
    state = ExplorerState.from_specs(SMALL_NETWORK, "loihi2", access=access)
    for name in ("fifo", "folder", "link"):
        with pytest.raises(InputFileError, match="not a regular file"):
            state.load(SMALL_NETWORK, "loihi2", partition_spec=f"file:{tmp_path / name}")
    state.load(SMALL_NETWORK, "loihi2", partition_spec=f"file:{tmp_path / 'part'}")
    read = state.mapping.partition.assignment  # an allowed regular file is read
    on_cores = read >= 0
    pairs = set(zip(read[on_cores].tolist(), blocks[on_cores].tolist(), strict=True))
    assert len(pairs) == len(set(blocks[on_cores].tolist())) > 1  # the file's blocks, renamed
    system = ClientAccess.for_server(allow_files=["/dev", "/proc/self"])
    for path in ("/dev/zero", "/dev/null", "/proc/self/status"):
        with pytest.raises(InputFileError, match="not a regular file"):
            system.partition(f"file:{path}")
    fifo.close()
    assert not fifo.opened


def test_a_reload_does_not_open_what_an_uploaded_network_is_called(client, secret, tmp_path):
    """An uploaded network's name is the client's: a session restored from its snapshot
    (a page reload) asks the access rule before resolving it, like any spec."""
    from dataclasses import replace

    from explorer.app import SnapshotStore, session_state

    network = replace(load_network_spec("linear-dense:M=2,N=8"), name=str(secret / "secret.npz"))
    save_network(network, tmp_path / "up.npz")
    client.upload("up.npz", (tmp_path / "up.npz").read_bytes())
    assert client.inputs.network_spec == str(secret / "secret.npz")
    with pytest.raises(SpecError, match="opens no files"):
        ExplorerState(access=client.access).restore(client.snapshot())
    store = SnapshotStore()
    store.put("t", client.snapshot())
    state, _ = session_state(SMALL_NETWORK, "loihi2", token="t", store=store,
                             access=client.access)  # fmt: skip
    assert state.inputs.network_spec == SMALL_NETWORK  # the server's start, not the named file


# ------------------------------------------------------------------ what a client hears
BROKEN_NETWORKS = [
    ("empty.npz", b""),
    ("bomb.npz", _npz(indptr=np.arange(3))),
    ("pickled.npz", _npz(indptr=np.array([0, 1], dtype=object))),
    ("garbage.npz", b"PK\x03\x04" + bytes(range(256)) * 4),
    ("binary.hgr", b"\x8e\x00\x01"),
    ("short.hgr", b"2 3\n1 2\n"),
    ("text.nir", b"Input -> LIF"),
    ("garbage.nir", b"\x89HDF\r\n\x1a\n" + bytes(range(256)) * 4),
]


@pytest.mark.parametrize(("name", "data"), BROKEN_NETWORKS)
def test_a_broken_network_upload_names_the_users_file_never_the_servers_copy(client, name, data):
    with pytest.raises(MeshScopeError) as e:
        client.upload(name, data)
    said = str(e.value)
    assert said.startswith(name)
    assert tempfile.gettempdir() not in said and "tmp" not in said.replace(name, "")


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"\x8e\x00{", "it is not text"),
        ('{"é": 1}'.encode("latin-1"), "it is not text"),
        (b'{"format": ', "its JSON breaks at line 1"),
        (b"[" * 100_000 + b"]" * 100_000, "nests far too deep"),
    ],
)
def test_a_broken_json_upload_is_said_in_words_not_pythons(client, data, says):
    """Mapping, reference and scene files: the user's file named, what is wrong with it
    and what to choose instead; never a codec's or an exception's own text."""
    for say in (
        _error(client.upload, "tuned.json", data),
        _error(client.set_reference, "file", filename="tuned.json", data=data),
        _scene_file(client, data, "tuned.json"),
    ):
        assert say.startswith("tuned.json is not a"), say
        assert says in say and "codec" not in say and "Error" not in say


def test_a_hardware_file_resized_is_still_a_file(client, secret, monkeypatch):
    """``FILE.toml@RxC`` reads FILE.toml (from the server's working folder, if it names
    no folder): refused alike whether it is there or not."""
    monkeypatch.chdir(secret)
    said = [
        _error(client.load, SMALL_NETWORK, f"{name}.toml@2x2").replace(name, "NAME")
        for name in ("secret", "missing")
    ]
    assert said[0] == said[1] and "opens no files" in said[0]
