// vercel.mjs - drives Vercel's own Sandbox SDK (@vercel/sandbox from the
// npm registry) against tests/harness/fake-vercel.py: create a sandbox
// with tags, env and resources, list it by tag, run a command waiting for
// it (logs streamed), run one detached and read its logs and exit code,
// read a file back, stop the session, delete the sandbox.  Prints one "ok WHAT" line per
// step that matched; any mismatch or SDK error exits 1 with the reason.
//
// Usage: node vercel.mjs SDK_DIR FAKE_ORIGIN TOKEN TEAM PROJECT
// The SDK takes token, teamId and projectId as options (else OIDC or
// VERCEL_* variables); its API client has a baseUrl but Sandbox.create,
// get and list never pass one ("https://vercel.com/api" is fixed in
// api-client.ts).  They do pass the caller's `fetch` option, so the
// requests reach the fake through a fetch that swaps that origin for
// FAKE_ORIGIN and leaves path, query, headers and body as they are.
import { createRequire } from 'node:module';
import { check, fail } from './lib.mjs';

const [sdkDir, origin, token, teamId, projectId] = process.argv.slice(2);
const require = createRequire(sdkDir + '/');
const { Sandbox } = require('@vercel/sandbox');
const API = 'https://vercel.com';

// Sends a request meant for the Vercel API to the fake instead.
function toFake(input, init) {
	const url = String(input instanceof Request ? input.url : input);
	if (!url.startsWith(API + '/'))
		fail('request outside the API: ' + url);
	return fetch(origin + url.slice(API.length), init);
}

const creds = { token, teamId, projectId, fetch: toFake };
const run = `sdk-${process.pid}`;
const sb = await Sandbox.create({
	...creds,
	tags: { vigil: '1', 'vigil-run': run },
	env: { SDK_VAR: 'from the sdk' },
	resources: { vcpus: 2 },
	timeout: 60000,
});
check('create: running', sb.status, 'running');

const page = await Sandbox.list({ ...creds, tags: { 'vigil-run': run } });
check('list by tag', JSON.stringify(page.sandboxes.map((b) => b.name)),
    JSON.stringify([sb.name]));

const done = await sb.runCommand({
	cmd: 'sh',
	args: ['-c', 'echo "o $SDK_VAR $ONE"; echo e >&2; exit 4'],
	env: { ONE: '1' },
});
check('wait: exit code', done.exitCode, 4);
check('wait: stdout', await done.stdout(), 'o from the sdk 1\n');
check('wait: stderr', await done.stderr(), 'e\n');

const cmd = await sb.runCommand({
	cmd: 'sh', args: ['-c', 'echo a; sleep 0.2; echo b >&2; exit 5'],
	detached: true,
});
const logs = [];
for await (const l of cmd.logs())
	logs.push(`${l.stream}:${l.data}`);
check('logs: streams', logs.join(''), 'stdout:a\nstderr:b\n');
const fin = await cmd.wait();
check('detached: exit code', fin.exitCode, 5);

// Outputs the way vigil reads them: a file written by a command, read
// back by readFileToBuffer (POST .../fs/read), bytes exact; a missing
// file is null.
const wrote = await sb.runCommand({
	cmd: 'sh', args: ['-c', "printf 'x\\001\\377y' >out.bin; pwd"],
});
const cwd = (await wrote.stdout()).trim();
const got = await sb.readFileToBuffer({ path: cwd + '/out.bin' });
check('read file', got === null ? 'null' : got.toString('hex'),
    '7801ff79');
check('read missing file', await sb.readFileToBuffer({ path: 'nope',
    cwd }), null);

await sb.stop();
const after = await Sandbox.get({ ...creds, name: sb.name });
check('stop: status', after.status, 'stopped');
await sb.delete();
let gone = '';
try {
	await Sandbox.get({ ...creds, name: sb.name });
} catch (e) {
	gone = String(e.message || e);
}
if (!/not found|404/i.test(gone))
	fail('delete: the sandbox is still there (' + gone + ')');
console.log('ok delete');
