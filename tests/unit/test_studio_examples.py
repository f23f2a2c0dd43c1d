import json
from pathlib import Path

from langchain_core.messages import HumanMessage, convert_to_messages

import ripplegraph.studio.examples
from ripplegraph.agent.state import IngestInput, RecallInput

EXAMPLES = Path(ripplegraph.studio.examples.__file__).parent


def test_example_inputs_match_the_graph_contracts() -> None:
    chat = json.loads((EXAMPLES / "chat_input.json").read_text())
    assert isinstance(convert_to_messages(chat["messages"])[0], HumanMessage)
    recall = RecallInput.model_validate(json.loads((EXAMPLES / "recall_input.json").read_text()))
    assert recall.namespace == "demo"
    ingest = IngestInput.model_validate(json.loads((EXAMPLES / "ingest_input.json").read_text()))
    assert ingest.sessions[0].turns[0].speaker == "Alex"
