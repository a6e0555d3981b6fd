"""Memory files in the app: the chosen memory survives a reload (it is in the URL), the sidebar says where
new memories go and takes a path, and a finished build leads on to the tables it made."""
from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest
from test_app_pages import fake_models, memeye_upload, memory_path, texts  # noqa: F401  (fixtures)

from ui import state

APP = str(Path(__file__).resolve().parent.parent / "app.py")


def _app(**params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    for k, v in params.items():
        at.query_params[k] = v
    return at


def _sidebar_text(at: AppTest) -> str:
    parts = [c.value for c in at.sidebar.caption] + [w.value for w in at.sidebar.warning]
    return "\n".join(parts)


def test_a_link_naming_a_memory_opens_it_in_a_new_session(memory_path):
    at = _app(memory=memory_path)
    at.run()
    assert not at.exception
    assert at.session_state[state.STORE_PATH] == memory_path
    assert at.query_params["memory"] == [memory_path] or at.query_params["memory"] == memory_path
    assert "13 rounds" in texts(at) or "13" in texts(at)


def test_a_link_to_something_that_is_not_a_memory_is_refused_with_the_reason(tmp_path):
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    at = _app(memory=str(other))
    at.run()
    assert not at.exception
    assert state.STORE_PATH not in at.session_state or at.session_state[state.STORE_PATH] != str(other)
    assert "notes.txt is not a .duckdb memory file" in _sidebar_text(at)


def test_the_address_follows_the_memory_picked_in_the_sidebar(memory_path):
    at = _app()
    at.run()
    assert not at.exception
    assert Path(str(at.query_params["memory"][0] if isinstance(at.query_params["memory"], list)
                    else at.query_params["memory"])).name == Path(state.DEFAULT_STORE).name
    at.session_state[state.STORE_PATH] = memory_path  # as the picker's callback does
    at.run()
    got = at.query_params["memory"]
    assert (got[0] if isinstance(got, list) else got) == memory_path


def test_a_new_memory_can_be_a_path_and_the_sidebar_names_the_folder(tmp_path):
    at = _app()
    at.run()
    assert f"New memories go to `{state.MEMORY_DIR}`" in _sidebar_text(at)
    target = tmp_path / "elsewhere" / "garden"
    at.text_input(key="sb_new_name").input(str(target)).run()
    at.button(key="sb_create").click().run()
    assert not at.exception
    assert at.session_state[state.STORE_PATH] == str(target) + ".duckdb"
    assert "not built yet" in _sidebar_text(at)


def test_new_memory_names_and_paths():
    assert state.new_memory_path("  my log! ") == state.MEMORY_DIR / "mylog.duckdb"
    assert state.new_memory_path("sub/x.duckdb") == state.MEMORY_DIR / "sub" / "x.duckdb"
    assert state.new_memory_path("/data/m") == Path("/data/m.duckdb")
    assert state.new_memory_path("!!!") is None and state.new_memory_path("  ") is None


def test_a_finished_build_links_to_each_new_table_and_the_schemas(tmp_path):
    path = str(tmp_path / "fresh.duckdb")
    at = _app(memory=path)
    at.run()
    at.switch_page("app_pages/upload.py").run()
    assert not at.exception
    doc, _ = memeye_upload(10, images=0)
    at.file_uploader[0].set_value([("h.json", doc, "application/json")]).run()
    at.button(key="upl_build").click().run()
    assert not at.exception, at.exception
    links = [(e.proto.label, e.proto.page) for e in at.get("page_link")]
    table_links = [label for label, page in links if "tables" in page]
    assert table_links and all("rows" in label and "new" in label for label in table_links)
    assert any("schemas" in page for _, page in links)
    assert "new table(s)" in texts(at)


def test_a_table_link_opens_that_table(tmp_path):
    import shutil

    import pytest
    from streamlit.testing.v1 import AppTest as _AT

    demo = Path(APP).parent / "data" / "demo.duckdb"
    if not demo.exists():
        pytest.skip("the demo memory is built by `make demo` (make test builds it)")
    path = tmp_path / "demo.duckdb"
    shutil.copy(demo, path)
    at = _AT.from_file(str(Path(APP).parent / "app_pages" / "tables.py"), default_timeout=60)
    at.session_state[state.STORE_PATH] = str(path)
    at.run()
    names = list(at.selectbox(key="tbl_name").options)
    assert len(names) >= 2 and at.selectbox(key="tbl_name").value == names[0]
    at.query_params["table"] = names[-1]
    at.run()
    assert not at.exception
    assert at.selectbox(key="tbl_name").value == names[-1]
    # the link opens the table once; the person's own choice then stands
    at.selectbox(key="tbl_name").select(names[0]).run()
    assert at.selectbox(key="tbl_name").value == names[0]
