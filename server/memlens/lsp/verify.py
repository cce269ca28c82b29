"""memlens/verify: "Verify What My Agents Read" (issue 20). The installed agents run offline
on a copy of a workspace folder (memlens.verify.run, the same as `memlens verify`), with work
done progress while they run; the answer is the VerifyResult (the client shows a notification
and, when a payload differs, a read-only document with the diffs). A release that verified
identical is remembered on this machine, so the folders are re-checked and the
`agent-version-unverified` note goes away."""

from __future__ import annotations

import asyncio
import os
import uuid
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from memlens.lsp.errors import InvalidParams, parse_params
from memlens.protocol.verify import VerifyParams

if TYPE_CHECKING:
    from memlens.lsp.state import MemlensServer

VERIFY = "memlens/verify"


def register(server: MemlensServer) -> None:
    @server.feature(VERIFY)
    async def verify_request(ls: MemlensServer, params: Any) -> dict[str, object]:
        from memlens.agents.gemini.trust import decide_trust
        from memlens.verify.run import NO_SANDBOX, VerifyError, verify
        from memlens.verify.sandbox import best_isolation

        request = parse_params(VerifyParams, params)
        # The folder the request names; only a single-root window may leave it out.
        folder = request.folder or ls.only_folder(VERIFY, "folder")
        if folder is None or not os.path.isdir(folder):
            raise InvalidParams(f"not a folder: {folder}" if folder else "no workspace folder")
        settings = ls.service.settings_for(folder)
        trusted, _ = decide_trust(folder, settings.home, explicit=settings.trusted,
                                  folder_trust_enabled=settings.folder_trust_enabled,
                                  editor=settings.editor_trusted)
        if not trusted:
            # The agents run on the folder's files (sandboxed and scrubbed, but still the
            # user's programs on the folder's text): only in a folder the user trusts.
            raise InvalidParams(f"{folder} is not trusted: Memory Lens runs your agents only "
                                "on a trusted workspace")
        home = settings.home
        installed = ls.service.installed if ls.service.installed is not None \
            else await asyncio.to_thread(ls.service.detect)
        will_run = any(a in installed for a in (request.agents or list(installed)))
        if will_run and not request.unsandboxed and best_isolation() != "sandbox":
            raise InvalidParams(NO_SANDBOX)  # before any progress shows: nothing will run
        token = f"memlens-verify-{uuid.uuid4().hex[:8]}"
        window = ls.client_capabilities.window
        use_progress = bool(window and window.work_done_progress)
        if use_progress:
            try:
                await ls.work_done_progress.create_async(token)
                ls.work_done_progress.begin(token, types.WorkDoneProgressBegin(
                    title="Memory Lens: verifying what your agents read",
                    message="copying the workspace"))
            except Exception:  # a client that refuses progress still gets the answer
                use_progress = False
        loop = asyncio.get_running_loop()

        def progress(message: str) -> None:
            if use_progress:
                loop.call_soon_threadsafe(lambda: ls.work_done_progress.report(
                    token, types.WorkDoneProgressReport(message=message)))

        try:
            result = await asyncio.to_thread(
                verify, folder, installed, list(request.agents) or None, home=home,
                read=request.read, progress=progress, trusted=True,
                unsandboxed=request.unsandboxed)
        except VerifyError as error:
            raise InvalidParams(str(error)) from None
        finally:
            if use_progress:
                ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))
        if any(a.remembered for a in result.agents):
            ls.rebuild()  # the profiles' notes follow what is now verified here
            ls.publish(ls.open_paths())
        return result.wire()
