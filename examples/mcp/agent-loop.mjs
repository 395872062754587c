// agent-loop.mjs SDK_DIR [VIGIL | URL] - an agent-style loop through the
// official MCP TypeScript SDK against `vigil mcp` (docs/mcp.md): the
// "model" here is a fixed plan, but the loop is what an agent does with
// the tools: run a step, read its result, and when the gate refuses one,
// ask the gate why and take the plan's safer way instead.  SDK_DIR holds
// node_modules/@modelcontextprotocol/sdk (npm install --prefix SDK_DIR
// @modelcontextprotocol/sdk@1).  With a URL (http://127.0.0.1:PORT/mcp)
// instead of the vigil binary, the loop connects to a running
// `vigil mcp --listen` over Streamable HTTP, with the bearer token from
// the environment variable VIGIL_MCP_TOKEN.
const [sdk, vigil = 'vigil'] = process.argv.slice(2);
const base = `${sdk}/node_modules/@modelcontextprotocol/sdk/dist/esm`;
const { Client } = await import(`${base}/client/index.js`);
const { StdioClientTransport } = await import(`${base}/client/stdio.js`);
const { StreamableHTTPClientTransport } = await import(
    `${base}/client/streamableHttp.js`);

const client = new Client({ name: 'agent-loop', version: '1.0.0' });
const http = /^https?:/.test(vigil);
await client.connect(http ? new StreamableHTTPClientTransport(new URL(vigil),
    { requestInit: { headers: { Authorization:
    `Bearer ${process.env.VIGIL_MCP_TOKEN}` } } }) :
    new StdioClientTransport({ command: vigil,
    args: ['mcp', '--idle-timeout', '10m'], env: process.env,
    stderr: 'ignore' }));
const { tools } = await client.listTools();
console.log('tools: ' + tools.map((t) => t.name).join(' '));

// Each step: a command, and what to do instead if the gate refuses it.
const plan = [
	{ run: 'mkdir -p build && cd build && echo "int main(){return 0;}" > m.c' },
	{ run: 'ls && pwd' },
	{ run: 'rm -rf /', instead: 'rm -rf ./build/*.o' },
	{ run: 'echo step done; exit 2' },
];
for (const step of plan) {
	let r = await client.callTool({ name: 'exec',
	    arguments: { command: step.run } });
	const out = r.structuredContent;
	if (r.isError && out?.denied) {
		const why = await client.callTool({ name: 'gate_check',
		    arguments: { command: step.run } });
		console.log(`refused: ${step.run}: the gate says ` +
		    `${why.structuredContent.verdict}: ${out.reason}`);
		r = await client.callTool({ name: 'exec',
		    arguments: { command: step.instead } });
		console.log(`instead: ${step.instead}: exit ` +
		    r.structuredContent.exit_code);
		continue;
	}
	console.log(`ran: ${step.run}: exit ${out.exit_code}` +
	    (out.stdout ? `, stdout ${JSON.stringify(out.stdout)}` : ''));
}
if (http)
	await client.transport.terminateSession();	/* DELETE: sessions end */
await client.close();
