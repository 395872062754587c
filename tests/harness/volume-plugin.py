#!/usr/bin/env python3
"""volume-plugin.py SOCKET DATA_DIR - a Docker volume plugin for tests.

Speaks the Docker volume plugin protocol (docs.docker.com, "Docker volume
plugins": JSON over HTTP on a unix socket, POST /Plugin.Activate and
/VolumeDriver.{Create,Remove,Mount,Unmount,Path,Get,List,Capabilities})
and backs each volume NAME with the host directory DATA_DIR/NAME, the way
a site's custom driver maps a host path.  podman finds it through its
containers.conf table [engine.volume_plugins] NAME = "SOCKET".

Listens on SOCKET (removed first, and on SIGTERM); writes SOCKET.pid.
Volume options are kept as given and reported by Get.  Every request is
logged on stderr.
"""
import json
import os
import signal
import socketserver
import sys
from http.server import BaseHTTPRequestHandler

SOCK, DATA = sys.argv[1], os.path.abspath(sys.argv[2])
CT = "application/vnd.docker.plugins.v1.2+json"
volumes = {}	# name -> options


def mountpoint(name):
	return os.path.join(DATA, name)


def vol_info(name):
	return {"Name": name, "Mountpoint": mountpoint(name),
		"Status": {"options": volumes[name]}}


def handle(path, req):
	name = req.get("Name", "")
	if path == "/Plugin.Activate":
		return {"Implements": ["VolumeDriver"]}
	if path == "/VolumeDriver.Capabilities":
		return {"Capabilities": {"Scope": "local"}}
	if path == "/VolumeDriver.List":
		return {"Volumes": [vol_info(n) for n in sorted(volumes)],
			"Err": ""}
	if not name or "/" in name or name.startswith("."):
		return {"Err": "bad volume name %r" % name}
	if path == "/VolumeDriver.Create":
		os.makedirs(mountpoint(name), exist_ok=True)
		volumes[name] = req.get("Opts") or {}
		return {"Err": ""}
	if name not in volumes:
		return {"Err": "no such volume %r" % name}
	if path == "/VolumeDriver.Remove":
		del volumes[name]
		return {"Err": ""}
	if path in ("/VolumeDriver.Mount", "/VolumeDriver.Path"):
		return {"Mountpoint": mountpoint(name), "Err": ""}
	if path == "/VolumeDriver.Unmount":
		return {"Err": ""}
	if path == "/VolumeDriver.Get":
		return {"Volume": vol_info(name), "Err": ""}
	return {"Err": "unknown call %s" % path}


class Handler(BaseHTTPRequestHandler):
	protocol_version = "HTTP/1.1"

	def do_POST(self):
		n = int(self.headers.get("Content-Length") or 0)
		raw = self.rfile.read(n) if n else b""
		try:
			req = json.loads(raw) if raw.strip() else {}
		except ValueError:
			req = {}
		out = json.dumps(handle(self.path, req)).encode()
		sys.stderr.write("%s %s -> %s\n" % (self.path, raw.decode(
			errors="replace"), out.decode()))
		sys.stderr.flush()
		self.send_response(200)
		self.send_header("Content-Type", CT)
		self.send_header("Content-Length", str(len(out)))
		self.end_headers()
		self.wfile.write(out)

	def log_message(self, fmt, *args):
		pass

	def address_string(self):
		return "unix"


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
	daemon_threads = True

	def handle_error(self, request, client_address):
		# podman drops its connections without a word; not an error.
		pass


def stop(sig, frame):
	try:
		os.unlink(SOCK)
	except OSError:
		pass
	os._exit(0)


os.makedirs(DATA, exist_ok=True)
try:
	os.unlink(SOCK)
except OSError:
	pass
signal.signal(signal.SIGTERM, stop)
srv = Server(SOCK, Handler)
with open(SOCK + ".pid", "w") as f:
	f.write("%d\n" % os.getpid())
srv.serve_forever()
