// Package reload re-reads a configuration file while the server runs, as
// kube-apiserver does for --authorization-config and
// --authentication-config: the file is checked periodically, a changed
// content is validated and applied, an invalid one is refused (the last
// good configuration stays in force), and each attempt is counted in the
// apiserver_<subsystem>_automatic_reloads_total and
// apiserver_<subsystem>_automatic_reload_last_timestamp_seconds metrics
// (status success or failure, apiserver_id_hash), with
// apiserver_<subsystem>_last_config_info naming the hash of the
// configuration in force.
package reload
