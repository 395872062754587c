// mcp-client.mjs SDK_DIR VIGIL MANIFEST [URL TOKEN] - drives `vigil mcp`
// with the official MCP TypeScript SDK (Client + StdioClientTransport,
// or with URL and TOKEN StreamableHTTPClientTransport against a running
// `vigil mcp --listen`): the handshake, tools/list, every tool, a denied
// command, progress, a cancellation (AbortSignal: the command's process
// tree is killed), the resources, protocol errors, and a client that
// goes away mid-command (nothing left running, its session closed).
// Prints "ok WHAT" per check; exits 1 at the first failure.
import { execFileSync } from 'node:child_process';
import { check, fail, retrying } from './lib.mjs';

const [sdk, vigil, manifest, url, token] = process.argv.slice(2);
const base = `${sdk}/node_modules/@modelcontextprotocol/sdk/dist/esm`;
const { Client } = await import(`${base}/client/index.js`);
const { StdioClientTransport } = await import(`${base}/client/stdio.js`);
const { StreamableHTTPClientTransport } = await import(
    `${base}/client/streamableHttp.js`);

// A connected client: of a fresh `vigil mcp ARGS`, or with url a new
// MCP session of the server listening there.
async function connect(args = []) {
	const client = new Client({ name: 'vigil-test', version: '1.0.0' });
	const transport = url ? new StreamableHTTPClientTransport(new URL(url),
	    { requestInit: { headers: { Authorization: `Bearer ${token}` } } }) :
	    new StdioClientTransport({ command: vigil, args: ['mcp', ...args],
	    env: process.env, stderr: 'inherit' });
	await client.connect(transport);
	if (url)
		check('an MCP session id', /^[0-9a-f]{32}$/.test(
		    transport.sessionId), true);
	return client;
}

// The pids of processes whose command line holds pat.
function pids(pat) {
	try {
		return execFileSync('pgrep', ['-f', pat]).toString().trim();
	} catch {
		return '';
	}
}

// Waits until no process matches pat (10 s at most).
async function noneLeft(what, pat) {
	await retrying(async () => pids(pat) === '' ? true : null);
	console.log('ok ' + what);
}

// A tool call's structured content, failing on a tool error.
async function call(client, name, args, opts) {
	const r = await client.callTool({ name, arguments: args }, undefined,
	    opts);
	if (r.isError)
		fail(`${name} ${JSON.stringify(args)}: ${JSON.stringify(r)}`);
	if (JSON.stringify(JSON.parse(r.content[0].text)) !==
	    JSON.stringify(r.structuredContent))
		fail(`${name}: text content is not the structured content`);
	return r.structuredContent;
}

const client = await connect();
check('server name', client.getServerVersion().name, 'vigil');
check('tools and resources offered',
    Object.keys(client.getServerCapabilities()).sort().join(' '),
    'resources tools');
const { tools } = await client.listTools();
check('tools', tools.map((t) => t.name).sort().join(' '),
    'exec gate_check job_input job_kill job_output job_start run_report ' +
    'run_status run_submit session_close session_egress session_jobs ' +
    'session_list ' +
    'session_open task_logs');
check('every tool has both schemas', tools.every((t) =>
    t.inputSchema.type === 'object' && t.outputSchema.type === 'object'),
    true);
await client.ping();
console.log('ok ping');

// exec in the server's own session, opened at the first command.
let r = await call(client, 'exec', { command: 'echo out; echo err >&2; ' +
    'exit 3' });
check('exec stdout', r.stdout, 'out\n');
check('exec stderr apart', r.stderr, 'err\n');
check('exec exit code', r.exit_code, 3);
check('exec duration', typeof r.duration, 'number');
const session = r.session;
await call(client, 'exec', { command: 'cd /tmp && export KEPT=yes' });
r = await call(client, 'exec', { command: 'pwd; echo $KEPT' });
check('cwd and exports carry over', r.stdout, '/tmp\nyes\n');
check('same session', r.session, session);
r = await call(client, 'exec', { command: 'cat', stdin: 'given\n' });
check('stdin', r.stdout, 'given\n');
r = await call(client, 'exec', { command: 'seq 1 20000', output_limit: 200 });
check('output limited', r.truncated, true);
check('head kept', r.stdout.startsWith('1\n2\n3\n'), true);
check('tail kept', r.stdout.endsWith('19999\n20000\n'), true);
r = await call(client, 'exec', { command: 'sleep 5', timeout: 1 });
check('timeout', r.exit_code, 124);

// A refused command: a tool error with the reason and the allow rule.
let raw = await client.callTool({ name: 'exec', arguments: {
    command: 'rm -rf /' } });
check('denied is a tool error', raw.isError, true);
check('denied flag', raw.structuredContent.denied, true);
check('denied reason', /delete-root/.test(raw.structuredContent.reason),
    true);
check('allow rule', /^allow:/.test(raw.structuredContent.allow_rule), true);

// The gate without running.
r = await call(client, 'gate_check', { command: 'rm -rf /' });
check('gate_check deny', r.verdict, 'deny');
r = await call(client, 'gate_check', { command: 'ls -l' });
check('gate_check allow', r.verdict, 'allow');

// Sessions of their own.
r = await call(client, 'session_open', { idle_timeout: 120 });
const own = r.session;
check('session_open id', /^s-/.test(own), true);
r = await call(client, 'exec', { command: 'pwd', session: own });
check('exec in an opened session', r.session, own);
r = await call(client, 'session_list', {});
check('session_list', r.sessions.some((s) => s.id === own &&
    s.idle_timeout === 120), true);
r = await call(client, 'session_open', { name: 'mcp-named' });
const named = r.session;
r = await call(client, 'exec', { command: 'true', session: 'mcp-named' });
check('exec in a session by the name it was opened with', r.session, named);
await call(client, 'session_close', { session: named });
r = await call(client, 'session_close', { session: own });
check('session_close', r.closed, true);
raw = await client.callTool({ name: 'exec', arguments: { command: 'true',
    session: own } });
check('exec in a closed session is a tool error', raw.isError, true);

// Background commands: start, output at the end, the list, kill.
r = await call(client, 'job_start', { command: 'echo a; sleep 1; ' +
    'echo b >&2; exit 4' });
const job = r.job;
check('job_start in the default session', r.session, session);
r = await call(client, 'job_output', { job, wait: true });
check('job_output stdout', r.stdout, 'a\n');
check('job_output stderr', r.stderr, 'b\n');
check('job_output exit code', r.exit_code, 4);
r = await call(client, 'session_jobs', {});
check('session_jobs', r.jobs.some((j) => j.job === job &&
    j.state === 'exited' && j.exit_code === 4), true);
r = await call(client, 'job_start', { command: 'sleep 3023' });
await retrying(async () => pids('sleep 3023') !== '' ? true : null);
r = await call(client, 'job_kill', { job: r.job });
check('job_kill', r.state, 'killed');
await noneLeft('killed job: no process left', 'sleep 3023');
raw = await client.callTool({ name: 'job_start', arguments: {
    command: 'rm -rf /' } });
check('a refused background command is a tool error',
    raw.isError && raw.structuredContent.denied, true);

// Closing the server's own session: the next command gets a new one.
r = await call(client, 'session_close', { session });
r = await call(client, 'exec', { command: 'echo again' });
check('a new default session after closing it', r.session !== session &&
    r.stdout === 'again\n', true);
const session2 = r.session;

// Progress notifications while a command runs.
let ticks = [];
await call(client, 'exec', { command: 'sleep 2.5' }, {
    onprogress: (p) => ticks.push(p.progress) });
check('progress notifications', ticks.length >= 2 &&
    ticks.every((t, i) => i === 0 || t > ticks[i - 1]), true);

// Cancellation kills the command's process tree.
const ac = new AbortController();
const running = client.callTool({ name: 'exec', arguments: {
    command: 'sh -c "sleep 3019" & sleep 3019; wait' } }, undefined,
    { signal: ac.signal });
await retrying(async () => pids('sleep 3019') !== '' ? true : null);
ac.abort('enough');
await running.then(() => fail('an aborted call resolved'), () => {});
await noneLeft('cancelled: no process left', 'sleep 3019');
r = await call(client, 'exec', { command: 'echo after' });
check('the session goes on after a cancel', r.stdout, 'after\n');

// Runs: submit, status, logs, report, and the resources.
r = await call(client, 'run_submit', { manifest });
const run = r.run;
const st = await retrying(async () => {
	const s = await call(client, 'run_status', { run });
	return s.status.state === 'SUCCEEDED' ? s : null;
});
check('run_status', st.status.id, run);
r = await call(client, 'task_logs', { run, task: '0' });
check('task_logs', r.text, 'from mcp\n');
r = await call(client, 'run_report', { run });
check('run_report', typeof r.report, 'object');
const { resources } = await client.listResources();
check('resources list the report', resources.some((x) =>
    x.uri === `vigil://runs/${run}/report`), true);
const rep = await client.readResource({ uri: `vigil://runs/${run}/report` });
check('report resource', typeof JSON.parse(rep.contents[0].text), 'object');
const log = await client.readResource({ uri:
    `vigil://runs/${run}/tasks/0/log` });
check('log resource', log.contents[0].text, 'from mcp\n');
const { resourceTemplates } = await client.listResourceTemplates();
check('templates', resourceTemplates.length, 3);

// Protocol errors.
// (Each call made when awaited: a refusal arriving before its handler
// is attached would be an unhandled rejection.)
for (const [what, p, code] of [
    ['unknown tool', () => client.callTool({ name: 'nope', arguments: {} }),
	-32602],
    ['missing argument', () => client.callTool({ name: 'exec',
	arguments: {} }), -32602],
    ['wrong type', () => client.callTool({ name: 'exec', arguments: {
	command: 7 } }), -32602],
    ['unknown resource', () => client.readResource({
	uri: 'file:///etc/passwd' }), -32002]]) {
	await p().then(() => fail(what + ' succeeded'), (e) =>
	    check(what, e.code, code));
}
// Over HTTP the client ends its MCP session (DELETE); over stdio its
// going away ends it.
if (url) {
	const sid = client.transport.sessionId;
	await client.transport.terminateSession();
	const res = await fetch(url, { method: 'POST', headers: {
	    Authorization: `Bearer ${token}`, 'Mcp-Session-Id': sid,
	    'Content-Type': 'application/json', Accept: 'application/json, ' +
	    'text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0',
	    id: 1, method: 'ping' }) });
	check('an ended MCP session is not found', res.status, 404);
}
await client.close();
await retrying(async () => execFileSync(vigil, ['session', 'list', '--json'])
    .toString().includes(`"id":"${session2}","name":"","backend":"local",` +
    '"state":"stopped"') ? true : null);
console.log('ok the default session is closed with the client');

// A client that goes away mid-command leaves nothing running.
const gone = await connect();
const left = gone.callTool({ name: 'exec', arguments: {
    command: 'sleep 3021 & sleep 3021; wait' } });
left.catch(() => {});
await retrying(async () => pids('sleep 3021') !== '' ? true : null);
await gone.close();
await noneLeft('disconnected: no process left', 'sleep 3021');
console.log('all passed');
