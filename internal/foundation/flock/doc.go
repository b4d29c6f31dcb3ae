// Package flock takes flock(2) locks on lock files: how Linoone's local processes
// (serve, consume, replay, the deny list's editors) keep out of each other's way.
package flock
