//! Clients that see every request before the SDK serialises it: to record what the
//! crate sends, or to fail requests the way a dying process would.

use dynamo_model::aws_sdk_dynamodb::config::interceptors::BeforeSerializationInterceptorContextRef;
use dynamo_model::aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use dynamo_model::aws_sdk_dynamodb::error::BoxError;
use dynamo_model::{Db, Table};
use std::sync::Arc;

/// A request's context before serialisation (its input is the operation's input).
pub type Request<'a> = BeforeSerializationInterceptorContextRef<'a>;

/// What an interceptor does with each request: an `Err` fails it before it is sent.
type Check = dyn Fn(&Request<'_>) -> Result<(), BoxError> + Send + Sync;

/// An interceptor that hands every request to its check.
#[derive(Clone)]
struct OnRequest {
    name: &'static str,
    check: Arc<Check>,
}

impl std::fmt::Debug for OnRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl Intercept for OnRequest {
    fn name(&self) -> &'static str {
        self.name
    }

    fn read_before_serialization(
        &self,
        context: &Request<'_>,
        _runtime_components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        (self.check)(context)
    }
}

/// `db`'s table through a copy of its client that calls `check` (an interceptor named
/// `name`) with every request before it is serialised.
pub fn intercepted<T: Table>(
    db: &Db<T>,
    name: &'static str,
    check: impl Fn(&Request<'_>) -> Result<(), BoxError> + Send + Sync + 'static,
) -> Db<T> {
    let interceptor = OnRequest {
        name,
        check: Arc::new(check),
    };
    let config = db
        .client()
        .config()
        .to_builder()
        .interceptor(interceptor)
        .build();
    let client = dynamo_model::aws_sdk_dynamodb::Client::from_conf(config);
    Db::new(client, db.table_name())
}
