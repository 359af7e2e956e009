//! One module per subcommand (except `script`, which has its own parser module).
pub mod budget;
pub mod compare;
pub mod horde;
pub mod lab;
pub mod loadtest;
pub mod netplay;
pub mod peer;
pub mod record;
pub mod run;
pub mod serve;
pub mod sync_test;
pub mod verify;
pub mod verifyd;
pub mod worker;
