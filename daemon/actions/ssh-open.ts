import { sshOpen } from "../../protocol/actions/ssh.js";
import { entry } from "./context.js";

export default entry(sshOpen, async (params, ctx) => ctx.services.ssh.issue(ctx.connection.tokenId, params.ttlMs));
