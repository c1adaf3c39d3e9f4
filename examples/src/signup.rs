//! A signup service and its unit tests, which run on the test double
//! (`dynamo_model::double`): no DynamoDB Local, no Java, no credentials.
//!
//! The service registers an account under its email, refusing to replace one, and imports
//! accounts from another system in batches. Its tests script what DynamoDB answers (a
//! success, a failed condition with the account already stored, a throttled batch) and
//! check what the service does with each answer and what it sent.
//!
//! ```sh
//! cargo test -p examples --lib signup
//! ```

use dynamo_model::{Db, Entity, Error, Table};

/// The service's table.
#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
pub struct Accounts;

/// An account, one per email.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Accounts, pk = "ACCOUNT#{email}", sk = "ACCOUNT")]
pub struct Account {
    /// The address the account is registered under.
    pub email: String,
    /// The name shown.
    pub name: String,
}

/// What a signup did.
#[derive(Debug, PartialEq)]
pub enum Signup {
    /// The account is new.
    Created,
    /// An account is registered under the email already: nothing was written.
    AlreadyRegistered {
        /// The name of the account stored.
        name: String,
    },
}

/// Registers `name` under `email`, unless an account holds the email.
pub async fn sign_up(db: &Db<Accounts>, email: &str, name: &str) -> Result<Signup, Error> {
    let account = Account {
        email: email.to_owned(),
        name: name.to_owned(),
    };
    match db.put(&account).if_absent().await {
        Ok(()) => Ok(Signup::Created),
        // DynamoDB returns the account stored with the refusal: no second read.
        Err(refused @ Error::ConditionFailed { .. }) => match refused.current::<Account>() {
            Some(stored) => Ok(Signup::AlreadyRegistered { name: stored?.name }),
            None => Err(refused),
        },
        Err(other) => Err(other),
    }
}

/// An import that could not write every account.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// DynamoDB refused a request.
    #[error(transparent)]
    Db(#[from] Error),
    /// Accounts still unwritten when the retries ran out: import them again.
    #[error("{0} account(s) not written")]
    Incomplete(usize),
}

/// Writes `accounts` (existing ones are replaced), in batches of 25; returns how many were
/// written.
pub async fn import(db: &Db<Accounts>, accounts: &[Account]) -> Result<usize, ImportError> {
    let out = db.batch_write().puts(accounts).await?;
    let failed: usize = out.failed.iter().map(|(ops, _)| ops.len()).sum();
    match out.unprocessed.len() + failed {
        0 => Ok(out.written),
        left => Err(ImportError::Incomplete(left)),
    }
}

#[cfg(test)]
mod tests;
