//! Your first xApp (docs/xapps.md): wait for an E2 node, watch every DRB's
//! RLC sojourn, and give a bloated DRB CoDel + round robin + 5G-BDP (the
//! TC-RAN paper's low-latency xApp, Fig. 7).
//!
//! Run: `cargo run --release -p tcran-xapp --example first_xapp`, then
//! point a node at 127.0.0.1:36421.
use tcran_xapp::{ControlOutcome, Metric, Trigger, Xapp, XappConfig};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let xapp = Xapp::start(XappConfig::tcp("127.0.0.1:36421".parse()?)).await?;
    let node = xapp
        .wait_for_nodes(1, std::time::Duration::from_secs(600))
        .await?[0]
        .clone();
    println!("{} connected with DRBs {:?}", node.name, node.drbs);
    // One report per DRB whose RLC sojourn rises above 10 ms (checked every 10 ms).
    let trigger = Trigger::Condition {
        check_period_ms: 10,
        metric: Metric::RlcSojournUs,
        threshold: 10_000,
        rising_edge_only: true,
    };
    let mut bloated = xapp.subscribe_tc(node.id, trigger, &[]).await?;
    let cure: tcran_tc::PipelineConfig = toml::from_str(
        r#"scheduler = { kind = "round_robin" }
           pacer = { kind = "bdp" }
           queues = [ { id = 0, kind = "codel" } ]"#,
    )?;
    while let Some(report) = bloated.recv().await {
        for drb in report.drbs {
            let sojourn = drb.lower.rlc_sojourn;
            match xapp.deploy(node.id, drb.drb, cure.clone()).await? {
                ControlOutcome::Applied(_) => {
                    println!("{}: sojourn {sojourn}, CoDel deployed", drb.drb)
                }
                ControlOutcome::Refused(why) => println!("{}: refused: {why}", drb.drb),
            }
        }
    }
    Ok(())
}
