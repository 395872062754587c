// daytona.mjs - drives Daytona's own TypeScript SDK (@daytonaio/sdk from
// the npm registry) against tests/harness/fake-daytona.py: create a
// sandbox with labels, env and resources, list it by label, run a
// command in a session, read its exit code and its logs (stdout and
// stderr apart), list and download files, delete the sandbox.  Prints one "ok WHAT" line per step
// that matched; any mismatch or SDK error exits 1 with the reason.
//
// Usage: node daytona.mjs SDK_DIR API_URL API_KEY
// SDK_DIR holds the node_modules the SDK was installed into; the SDK
// takes the endpoint and key from its constructor (apiUrl, apiKey), as
// its docs and Daytona.js say (DAYTONA_API_URL / DAYTONA_API_KEY are the
// environment's equivalents, read when the options are absent).
import { createRequire } from 'node:module';
import { check, fail, retrying } from './lib.mjs';

const [sdkDir, apiUrl, apiKey] = process.argv.slice(2);
const require = createRequire(sdkDir + '/');
const { Daytona } = require('@daytonaio/sdk');

const daytona = new Daytona({
	apiUrl, apiKey, target: 'us',
	// The event stream is a socket.io connection; polling is the REST
	// protocol the fake (and vigil) speak.
	useDeprecatedPolling: true,
});

const run = `sdk-${process.pid}`;
const sb = await daytona.create({
	language: 'python',
	labels: { vigil: '1', 'vigil-run': run },
	envVars: { SDK_VAR: 'from the sdk' },
	resources: { cpu: 2, memory: 2 },
	autoStopInterval: 0,
}, { timeout: 30 });
check('create: started', sb.state, 'started');
check('create: labels', sb.labels['vigil-run'], run);

const listed = [];
for await (const b of daytona.list({ labels: { 'vigil-run': run } }))
	listed.push(b.id);
check('list by label', JSON.stringify(listed), JSON.stringify([sb.id]));

const sid = 'vigil-sdk';
await sb.process.createSession(sid);
const ex = await sb.process.executeSessionCommand(sid, {
	command: 'echo out-1; echo err-1 >&2; echo out-2; exit 3',
	runAsync: true,
});
if (!ex.cmdId)
	fail('exec: no cmdId in ' + JSON.stringify(ex));
console.log('ok exec: cmdId');
const cmd = await retrying(async () => {
	const c = await sb.process.getSessionCommand(sid, ex.cmdId);
	return c.exitCode === undefined || c.exitCode === null ? null : c;
});
check('command: exit code', cmd.exitCode, 3);
const logs = await sb.process.getSessionCommandLogs(sid, ex.cmdId);
check('logs: stdout', logs.stdout, 'out-1\nout-2\n');
check('logs: stderr', logs.stderr, 'err-1\n');
// Both streams in the combined output (their order is the pipes' race).
check('logs: output', logs.output.split('\n').sort().join(' '),
    ' err-1 out-1 out-2');

// Outputs the way vigil brings them back: the work dir, the listing
// (an lstat each: a link is mode "L..."), the bytes by the toolbox's own
// generated client (@daytona/toolbox-api-client, FileSystemApi).
const wr = await sb.process.executeSessionCommand(sid, {
	command: "mkdir -p out && printf 'a\\nb' >out/f.txt && " +
	    'ln -s f.txt out/l',
	runAsync: true,
});
await retrying(async () => {
	const c = await sb.process.getSessionCommand(sid, wr.cmdId);
	return c.exitCode === undefined || c.exitCode === null ? null : c;
});
const wd = await sb.getWorkDir();
if (typeof wd !== 'string' || !wd.startsWith('/'))
	fail('work dir: ' + JSON.stringify(wd));
console.log('ok work dir');
const ls = await sb.fs.listFiles(wd + '/out');
check('list files', JSON.stringify(ls.map((f) => [f.name, f.isDir,
    f.size, f.mode[0]]).sort()), JSON.stringify([['f.txt', false, 3, '-'],
    ['l', false, 5, 'L']]));
const { FileSystemApi, Configuration } =
    require('@daytona/toolbox-api-client');
const tb = new FileSystemApi(new Configuration({
	basePath: sb.toolboxProxyUrl.replace(/\/$/, '') + '/' + sb.id,
	baseOptions: { headers: { Authorization: 'Bearer ' + apiKey } },
}));
const dl = await tb.downloadFile(wd + '/out/f.txt',
    { responseType: 'arraybuffer' });
check('download file', Buffer.from(dl.data).toString(), 'a\nb');

await sb.process.deleteSession(sid);
console.log('ok delete session');
await sb.delete();
let gone = '';
try {
	await daytona.get(sb.id);
} catch (e) {
	gone = String(e.message || e);
}
if (!/not found/i.test(gone))
	fail('delete: the sandbox is still there (' + gone + ')');
console.log('ok delete');
