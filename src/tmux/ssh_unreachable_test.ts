import assert from "node:assert/strict";
import { hostKeyRefusal, sshComplaint } from "./ssh_unreachable.ts";

Deno.test("sshComplaint, hostKeyRefusal: ssh's reason, never a banner of @ or a bare \\r", () => {
  const changed = [
    "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@",
    "@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @",
    "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@",
    "IT IS POSSIBLE THAT SOMEONE IS DOING SOMETHING NASTY!",
    "Offending ED25519 key in /home/u/.ssh/known_hosts:3",
    '  ssh-keygen -f "/home/u/.ssh/known_hosts" -R "[10.0.0.5]:2222"',
    "Host key for [10.0.0.5]:2222 has changed and you have requested strict checking.",
    "Host key verification failed.",
    "",
  ].join("\r\n");
  const said = hostKeyRefusal(changed)!;
  assert.match(said, /REMOTE HOST IDENTIFICATION HAS CHANGED/);
  assert.match(said, /Retrying will not help/);
  assert.match(said, /ssh-keygen -R '\[10\.0\.0\.5\]:2222'/);
  // A name with anything but name characters is not offered as a command.
  assert.match(hostKeyRefusal(changed.replace("[10.0.0.5]:2222 has", "x;rm has"))!, /-R 'HOST'/);
  const unknown = "ssh_askpass: exec(/dev/null/x): Not a directory\r\n" +
    "Host key verification failed.\r\nkex_exchange_identification: Connection closed\r\n";
  assert.match(hostKeyRefusal(unknown)!, /not in known_hosts.*Retrying will not help/);
  assert.equal(hostKeyRefusal("ssh: connect to host a port 22: Connection refused\n"), null);
  assert.equal(sshComplaint(unknown), "Host key verification failed.");
  assert.equal(
    sshComplaint(
      "ssh_askpass: exec(/dev/null/x): Not a directory\r\n" +
        "Warning: Permanently added '[127.0.0.1]:2222' (ED25519) to the list of known hosts.\r\n" +
        "u@127.0.0.1: Permission denied (publickey).\r\n",
    ),
    "u@127.0.0.1: Permission denied (publickey).",
  );
  assert.equal(sshComplaint("\n@@@\n\r\n"), undefined);
});
