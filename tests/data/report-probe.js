/*
 * report-probe.js - put at the end of a copy of a `vigil report` page by
 * tests/integration/report-lib.sh (probe): reads what the page drew and
 * writes it as JSON into a pre element of id "probe", for the test.
 *   lanes, rows        the timeline's lanes and rows (canvas data-*)
 *   box                the canvas on the page: x, y, width, height
 *   bad                attempts that ended other than SUCCEEDED, on the
 *                      timeline; of them:
 *     narrow           drawn narrower than MINW (3) pixels
 *     hidden           whose middle pixel is SUCCEEDED green or the
 *                      background's (covered, or not drawn)
 *     mislabelled      whose hover label (the #tip shown by a mousemove
 *                      over its middle) names neither its task and
 *                      attempt first nor it among the others "also
 *                      here" (bars that share their pixels)
 *   good_label         the hover label of the first SUCCEEDED attempt
 *   bad_label          the hover label of the first other one
 *   labels             the hover labels of the first 300 others, by
 *                      "task/attempt"
 *   retried            attempts of tasks that ran more than once
 *   failed_px          canvas pixels of FAILED's colour
 *   table              data-state of every task row drawn, and the
 *                      state filter it opened with
 */
(function () {
	var out = { error: null }, MINW = 3;
	try {
		var D = JSON.parse(document.getElementById("data").textContent);
		var cv = document.getElementById("timeline"), T = window.vigilTimeline;
		var af = {}, i;
		D.attempt_fields.forEach(function (n, k) { af[n] = k; });
		var tip = document.getElementById("tip");
		var r = cv.getBoundingClientRect();
		out.lanes = +cv.getAttribute("data-lanes");
		out.rows = +cv.getAttribute("data-rows");
		out.box = { x: r.left + window.scrollX, y: r.top + window.scrollY,
		    width: r.width, height: r.height };
		var c = cv.getContext("2d");
		var img = c.getImageData(0, 0, cv.width, cv.height).data;
		var rgb = function (h) {
			return [1, 3, 5].map(function (k) { return parseInt(h.substr(k, 2), 16); });
		};
		var COL = { SUCCEEDED: "#2e9e5b", FAILED: "#d9453d" };
		var near = function (p, h) {
			var q = rgb(h);
			return Math.abs(p[0] - q[0]) < 10 && Math.abs(p[1] - q[1]) < 10 &&
			    Math.abs(p[2] - q[2]) < 10;
		};
		var dpr = cv.width / r.width;
		var pixel = function (x, y) {
			var o = (Math.floor(y * dpr) * cv.width + Math.floor(x * dpr)) * 4;
			return [img[o], img[o + 1], img[o + 2]];
		};
		var hover = function (x, y) {
			cv.dispatchEvent(new MouseEvent("mousemove", { bubbles: true,
			    clientX: r.left + x, clientY: r.top + y }));
			return tip.hidden ? "" : tip.textContent;
		};
		var per = {};
		D.attempts.forEach(function (a) {
			per[a[af.task]] = (per[a[af.task]] || 0) + 1;
		});
		out.bad = 0; out.narrow = 0; out.hidden = 0; out.mislabelled = 0;
		out.retried = 0; out.good_label = null; out.bad_label = null;
		out.labels = {};
		out.examples = [];
		for (i = 0; i < D.attempts.length; i++) {
			var a = D.attempts[i], st = D.states[a[af.state]], g = T.geo[i];
			if (a[af.lane] < 0) continue;
			if (per[a[af.task]] > 1) out.retried++;
			var mx = g[0] + g[2] / 2, my = g[1] + g[3] / 2;
			if (st === "SUCCEEDED") {
				if (out.good_label === null) out.good_label = hover(mx, my);
				continue;
			}
			out.bad++;
			if (g[2] < MINW) out.narrow++;
			var p = pixel(mx, my);
			if (near(p, COL.SUCCEEDED) || near(p, "#ffffff") ||
			    near(p, "#f3f5f8") || near(p, "#d8dee6")) {
				out.hidden++;
				if (out.examples.length < 5) out.examples.push([i, st, p]);
			}
			/* Labels of the first 300: a mousemove each. */
			if (out.bad <= 300) {
				var lab = hover(mx, my);
				if (out.bad_label === null) out.bad_label = lab;
				out.labels[a[af.task] + "/" + a[af.attempt]] = lab;
				var first = lab.split("\n")[0], tk = "task " + a[af.task];
				if (!((first === tk || first.indexOf(tk + " [") === 0) &&
				    lab.indexOf("\nattempt " + a[af.attempt] + " ") >= 0) &&
				    lab.indexOf("\n" + tk + " attempt " + a[af.attempt] +
				    " (") < 0)
					out.mislabelled++;
			}
		}
		hover(-50, -50);
		out.failed_px = 0;
		for (i = 0; i < img.length; i += 4)
			if (near([img[i], img[i + 1], img[i + 2]], COL.FAILED)) out.failed_px++;
		out.table = [];
		document.querySelectorAll("#tasks tbody tr.task").forEach(function (tr) {
			out.table.push(tr.getAttribute("data-state"));
		});
		out.filter = document.getElementById("state-filter").value;
		out.shown = document.getElementById("shown").textContent;
		out.show_all_hidden = document.getElementById("show-all").hidden;
	} catch (e) {
		out.error = String(e && e.stack || e);
	}
	var pre = document.createElement("pre");
	pre.id = "probe";
	pre.textContent = JSON.stringify(out);
	document.body.appendChild(pre);
})();
