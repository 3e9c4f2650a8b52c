//! Reading and layering the sources: `config.toml`, then the `-c` flags, then a thread's
//! `config` object. Each source is checked on its own ([`super::check`]) before it is merged,
//! so a warning or error can name the file or flag; the merged table then becomes a [`Config`]
//! (`super::typed`).

use std::path::{Path, PathBuf};

use toml::Table;

use super::check::{self, ConfigSource};
use super::error::ConfigError;
use super::overrides::{json_to_toml, parse_override, set_dotted};
use super::providers;
use super::resolved::{Config, ConfigLayers};

impl Config {
    /// Loads `home/config.toml` (absent is fine) and applies `overrides` (`key=value` strings).
    pub fn load(home: &Path, overrides: &[String]) -> Result<Config, ConfigError> {
        let path = home.join("config.toml");
        let user_text = match std::fs::read_to_string(&path) {
            Ok(text) => Some(text),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => return Err(ConfigError::Read { path, source }),
        };
        let config = Config::from_sources(home, path, user_text, overrides)?;
        for warning in &config.warnings {
            tracing::warn!("{}", warning.summary);
        }
        Ok(config)
    }

    /// The configuration as the user file says now (it may have been written since this was
    /// loaded), with the same flags and demo provider.
    pub fn reloaded(&self) -> Result<Config, ConfigError> {
        let path = self.layers.user_file.clone();
        let user_text = match std::fs::read_to_string(&path) {
            Ok(text) => Some(text),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => return Err(ConfigError::Read { path, source }),
        };
        if user_text == self.layers.user_text {
            return Ok(self.clone());
        }
        let mut config = Config::from_sources(&self.home, path, user_text, &self.layers.flag_args)?;
        config.demo_base_url = self.demo_base_url.clone();
        config.insert_demo_provider();
        Ok(config)
    }

    /// Whether `text`, as the user's config.toml under this daemon's `-c` flags, would load:
    /// the test a write passes before it replaces the file.
    pub(crate) fn check_user_text(&self, text: &str) -> Result<(), ConfigError> {
        let path = self.layers.user_file.clone();
        Config::from_sources(
            &self.home,
            path,
            Some(text.to_string()),
            &self.layers.flag_args,
        )
        .map(drop)
    }

    /// The configuration the user file's `user_text` and the `overrides` flags make.
    fn from_sources(
        home: &Path,
        path: PathBuf,
        user_text: Option<String>,
        overrides: &[String],
    ) -> Result<Config, ConfigError> {
        let user_table = match &user_text {
            Some(text) => text.parse::<Table>().map_err(|error| ConfigError::Parse {
                path: path.clone(),
                message: error.to_string(),
            })?,
            None => Table::new(),
        };
        let mut warnings = check::check_source(&user_table, &ConfigSource::File(path.clone()))?;
        let mut table = user_table.clone();
        let mut session_flags = Table::new();
        for raw in overrides {
            let (key, value) = parse_override(raw)?;
            let mut flag = Table::new();
            set_dotted(&mut flag, &key, value.clone())?;
            warnings.extend(check::check_source(
                &flag,
                &ConfigSource::Flag(raw.clone()),
            )?);
            set_dotted(&mut table, &key, value.clone())?;
            set_dotted(&mut session_flags, &key, value)?;
        }
        let layers = ConfigLayers {
            user_file: path,
            user_text,
            user_table,
            session_flags,
            flag_args: overrides.to_vec(),
        };
        warnings.extend(providers::check_provider_tables(
            &table, &layers, overrides,
        )?);
        let mut config = Config::from_table(home, table)?;
        config.layers = layers;
        config.warnings = warnings;
        Ok(config)
    }

    /// A copy with thread-level overrides (a JSON object of dotted keys or nested tables).
    pub fn with_json_overrides(
        &self,
        overrides: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<Config, ConfigError> {
        let mut table = self.table.clone();
        let mut warnings = Vec::new();
        for (key, value) in overrides {
            let value = json_to_toml(value)
                .ok_or_else(|| ConfigError::Invalid(format!("`{key}` cannot be null")))?;
            let mut one = Table::new();
            set_dotted(&mut one, key, value.clone())?;
            warnings.extend(check::check_source(&one, &ConfigSource::ThreadConfig)?);
            set_dotted(&mut table, key, value)?;
        }
        warnings.extend(providers::check_thread_provider_tables(
            &self.table,
            &table,
        )?);
        let mut config = Config::from_table(&self.home, table)?;
        config.layers = self.layers.clone();
        config.warnings = warnings;
        config.demo_base_url = self.demo_base_url.clone();
        config.insert_demo_provider();
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_parse_as_toml_with_string_fallback() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config::load(
            dir.path(),
            &[
                "model=\"gpt-5-mini\"".to_string(),
                "model_provider=local".to_string(),
                "model_providers.local.base_url=http://127.0.0.1:9/v1".to_string(),
                "model_providers.local.request_max_retries=0".to_string(),
            ],
        )
        .unwrap();
        assert_eq!(config.model, "gpt-5-mini");
        let provider = config.provider("local").unwrap();
        assert_eq!(provider.base_url, "http://127.0.0.1:9/v1");
        assert_eq!(provider.request_max_retries, 0);
        assert!(matches!(
            config.provider("nope"),
            Err(ConfigError::UnknownProvider(_))
        ));
    }
}
