"""A fake Slack Web API on 127.0.0.1 that the real AsyncWebClient talks to, with Slack's limits and injected faults.

`SlackFake` (`server`) routes each request to its method, by concept: the workspace's messages, reactions, statuses
and people (`workspace_methods`), files (`files`), response URLs and modals (`interactions`); what they share, the
call log and Slack's checks of a channel, blocks and text, is `base`. The workspace it serves is
`slack_workspace.SlackWorkspace`, the faults `slack_faults.InjectedFaults`, the verdict on Block Kit
`block_kit.check_blocks`; what Slack sends to the app is built by `slack_requests`.
"""

from testkit.fakes.slack_api.base import MAX_TEXT, ApiCall
from testkit.fakes.slack_api.files import UPLOAD
from testkit.fakes.slack_api.interactions import RESPONSE_URL
from testkit.fakes.slack_api.server import SlackFake

__all__ = ["MAX_TEXT", "RESPONSE_URL", "UPLOAD", "ApiCall", "SlackFake"]
