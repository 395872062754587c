// lib.mjs - what the SDK conformance scripts (daytona.mjs, vercel.mjs)
// share: a step check printing "ok WHAT", a failure that exits 1, and a
// bounded poll.

// Exits 1 with why.
export function fail(why) {
	console.error('FAIL ' + why);
	process.exit(1);
}

// Prints "ok WHAT" when got equals want, else fails naming both.
export function check(what, got, want) {
	if (got !== want)
		fail(`${what}: got ${JSON.stringify(got)}, want ` +
		    JSON.stringify(want));
	console.log('ok ' + what);
}

// Calls fn every 100 ms until it returns non-null (10 s at most).
export async function retrying(fn) {
	for (let i = 0; i < 100; i++) {
		const v = await fn();
		if (v !== null)
			return v;
		await new Promise((r) => setTimeout(r, 100));
	}
	fail('gave up waiting after 10 s');
}

process.on('unhandledRejection', (e) => fail('SDK error: ' +
    (e && e.stack ? e.stack : e)));
